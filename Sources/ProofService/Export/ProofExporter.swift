import Archive
import Cryptography
import Foundation
import Postgres
import ProofStore
import SignatureKit
import SignatureRender

/// Writes the proofs received in a period as a ZIP bundle, NDJSON or CSV, to a byte sink, in
/// constant memory: proofs are read in pages from one snapshot and each is written out before the
/// next page is fetched. Used by `GET /v1/exports/proofs` and by `countersign export`.
///
/// A ZIP bundle holds, per proof, `deliveries/<reference>/metadata.json`, `signature.png`,
/// `signature.svg` and `points` (the original request body), then `manifest.json` (every file's
/// SHA-256 and size, and a signed checkpoint of the audit chains' heads covering the export's snapshot),
/// `manifest.sig` (64-byte Ed25519 signature of `manifest.json`) and `public_key.pem`.
public struct ProofExporter: Sendable {
    /// The export formats.
    public enum Format: String, Sendable, CaseIterable {
        case zip, ndjson, csv

        /// The response content type.
        public var contentType: String {
            switch self {
            case .zip: "application/zip"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8"
            }
        }
    }

    /// What an export wrote.
    public struct Summary: Sendable, Equatable {
        /// Proofs written.
        public var proofs: Int
        /// Bytes written.
        public var bytes: Int
        /// The checkpoint in the manifest (ZIP only).
        public var checkpoint: AuditCheckpoint?
    }

    let reader: ProofExportReader
    let checkpoints: AuditCheckpointStore
    let key: Ed25519PrivateKey
    let renderOptions: RenderOptions

    /// Creates an exporter; ZIP manifests and checkpoints are signed with `key`.
    public init(database: PostgresClient, key: Ed25519PrivateKey, renderOptions: RenderOptions = RenderOptions()) {
        self.reader = ProofExportReader(database: database)
        self.checkpoints = AuditCheckpointStore(database: database, key: key)
        self.key = key
        self.renderOptions = renderOptions
    }

    /// Exports proofs with `since <= received_at < until` in `format`, handing the bytes to `sink`
    /// in chunks of about 64 KiB; `progress` is told (done, total) after each proof.
    public func export(format: Format, since: Date?, until: Date?, progress: ((Int, Int) -> Void)? = nil,
                       sink: ([UInt8]) async throws -> Void) async throws -> Summary {
        var output = ChunkedOutput()
        var zip = ZipArchiveWriter()
        var manifestFiles: [ExportManifest.File] = []
        var snapshot: ProofExportReader.Snapshot?
        var signed: AuditCheckpoint?
        var count = 0
        let exportedAt = Date()
        try await reader.read(since: since, until: until, start: { seen in
            snapshot = seen
            // The heads of the export's own snapshot: the checkpoint covers exactly the events
            // (every exported proof's `proof_recorded` among them) that snapshot sees.
            if format == .zip { signed = try AuditCheckpoint.sign(heads: seen.heads, key: key) }
            if format == .csv { try await output.write(Array(ExportCSV.header.utf8), to: sink) }
        }, each: { proof in
            count += 1
            switch format {
            case .zip:
                for (name, bytes, compress) in try files(for: proof) {
                    manifestFiles.append(ExportManifest.File(path: name, bytes: bytes.count, sha256: SHA256.hex(bytes)))
                    try await output.write(zip.add(name, contents: bytes, modified: proof.metadata.receivedAt, compress: compress), to: sink)
                }
            case .ndjson:
                try await output.write(try metadataJSON(proof) + [0x0A], to: sink)
            case .csv:
                try await output.write(Array(ExportCSV.row(proof).utf8), to: sink)
            }
            progress?(count, snapshot?.proofCount ?? count)
        })
        var checkpoint: AuditCheckpoint?
        if format == .zip, let signed {
            let manifest = try ExportManifest(createdAt: exportedAt, since: since, until: until, proofCount: count,
                                              checkpoint: signed, files: manifestFiles).encoded()
            let publicKey = Array(try key.publicKey.pemRepresentation().utf8)
            try await output.write(zip.add("manifest.json", contents: manifest, modified: exportedAt, compress: true), to: sink)
            try await output.write(zip.add("manifest.sig", contents: try key.signature(for: manifest), modified: exportedAt,
                                           compress: false), to: sink)
            try await output.write(zip.add("public_key.pem", contents: publicKey, modified: exportedAt, compress: false), to: sink)
            try await output.write(zip.finish(), to: sink)
            // Kept so `verify --database` checks it too.
            try await checkpoints.store(signed)
            checkpoint = signed
        }
        try await output.flush(to: sink)
        return Summary(proofs: count, bytes: output.total, checkpoint: checkpoint)
    }

    /// The four files of one proof: name, bytes, whether deflating them is worth it.
    func files(for proof: ExportedProof) throws -> [(String, [UInt8], Bool)] {
        let folder = "deliveries/" + ExportManifest.pathComponent(proof.metadata.deliveryReference) + "/"
        let svg: [UInt8]
        do {
            svg = try SignatureRenderer.renderSVGBytes(try InkParser().parse(proof.ink, format: .ink),
                                                       options: StoredRenderOptions.options(proof.metadata.renderOptionsJSON, base: renderOptions))
        } catch {
            throw ExportError.unreadableInk(reference: proof.metadata.deliveryReference, message: "\(error)")
        }
        return [(folder + "metadata.json", try metadataJSON(proof), true), (folder + "signature.png", proof.png, false),
                (folder + "signature.svg", svg, true), (folder + "points", proof.body, proof.metadata.bodyContentEncoding == nil)]
    }

    /// `{"delivery": {...}, "proof": <GET …/proof>}` with sorted keys.
    func metadataJSON(_ proof: ExportedProof) throws -> [UInt8] {
        var delivery: [String: Any] = ["reference": proof.metadata.deliveryReference, "recipient": ["name": proof.recipientName],
                                       "address": proof.address]
        delivery["destination"] = proof.destination.map { ["lat": $0.lat, "lon": $0.lon] as [String: Any] } ?? NSNull()
        let object: [String: Any] = ["delivery": delivery, "proof": ProofMetadataResource.object(proof.metadata)]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }
}

/// An export that could not be completed.
public enum ExportError: Error, CustomStringConvertible, Sendable {
    /// A stored proof's ink could not be parsed back for its SVG.
    case unreadableInk(reference: String, message: String)

    public var description: String {
        switch self {
        case .unreadableInk(let reference, let message): "the stored ink of \(reference) could not be read: \(message)"
        }
    }
}

/// Collects small writes into chunks of about 64 KiB before handing them on.
struct ChunkedOutput {
    static let chunkSize = 64 * 1024
    private var pending: [UInt8] = []
    private(set) var total = 0

    mutating func write(_ bytes: [UInt8], to sink: ([UInt8]) async throws -> Void) async throws {
        total += bytes.count
        if pending.isEmpty, bytes.count >= Self.chunkSize {
            try await sink(bytes)
            return
        }
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize { try await flush(to: sink) }
    }

    mutating func flush(to sink: ([UInt8]) async throws -> Void) async throws {
        guard !pending.isEmpty else { return }
        let chunk = pending
        pending.removeAll(keepingCapacity: true)
        try await sink(chunk)
    }
}
