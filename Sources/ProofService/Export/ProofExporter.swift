import Archive
import Cryptography
import Foundation
import Postgres
import ProofStore
import SignatureKit
import SignatureRender

/// Writes the proofs received in a period as a ZIP bundle, NDJSON or CSV, to a byte sink, in
/// bounded memory: proofs are read in pages from one snapshot and each page is written out before
/// the next is fetched; nothing is kept per proof. Used by `GET /v1/exports/proofs` and by
/// `countersign export`.
///
/// A ZIP bundle (format version 3, docs/audit.md "Export bundles", ``BundleLayout``) holds per proof
/// `deliveries/<reference>/metadata.json`, `signature.png`, `signature.svg`, `points` (the original
/// request body) and `ink` (the canonical ink); the audit chain segments that link every proof's
/// `proof_recorded` event to the signed checkpoint; `checksums/*.sha256` over all of them;
/// `manifest.json` (the checksum files' digests and the signed checkpoint of the export's
/// snapshot), `manifest.sig` (64-byte Ed25519 signature of `manifest.json`) and `public_key.pem`.
/// Each proof is checked against its event exactly as the verifier will before it is written: a
/// proof that fails stops the export with ``ExportError/proofFailsVerification(reference:failures:)``,
/// and no bundle is signed. Rendering, checksums and deflate run on the CPU work pool.
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
    let packer: BundleProofPacker
    let offload: BundleOffload
    /// Opens the proofs' sealed body, ink and PNG (on the CPU pool, as each is packed).
    let sealer: ProofSealer

    /// Creates an exporter; ZIP manifests and checkpoints are signed with `key`; sealed proofs are
    /// opened with `dataKeys`; CPU work runs on `work`.
    public init(database: PostgresClient, key: Ed25519PrivateKey, dataKeys: DataKeyProvider, work: CPUWorkPool,
                renderOptions: RenderOptions = RenderOptions()) {
        self.sealer = ProofSealer(keys: dataKeys)
        self.reader = ProofExportReader(database: database)
        self.checkpoints = AuditCheckpointStore(database: database, key: key)
        self.key = key
        self.packer = BundleProofPacker(renderOptions: renderOptions)
        self.offload = BundleOffload(work: work)
    }

    /// Exports proofs with `since <= received_at < until` in `format`, handing the bytes to `sink`
    /// in chunks of about 64 KiB; `progress` is told (done, total) after each page of proofs.
    /// A ZIP bundle holds of each proof what `contents` says (NDJSON and CSV never hold the points).
    public func export(format: Format, since: Date?, until: Date?, contents: ExportContents = .everything,
                       progress: ((Int, Int) -> Void)? = nil, sink: ([UInt8]) async throws -> Void) async throws -> Summary {
        if format == .zip { return try await exportBundle(since: since, until: until, contents: contents, progress: progress, sink: sink) }
        var output = ChunkedOutput()
        var snapshot: ProofExportReader.Snapshot?
        var count = 0
        try await reader.read(since: since, until: until, start: { seen in
            snapshot = seen
            if format == .csv { try await output.write(Array(ExportCSV.header.utf8), to: sink) }
        }, each: { proofs in
            for proof in proofs {
                count += 1
                if format == .ndjson {
                    try await output.write(try metadataJSON(proof) + [0x0A], to: sink)
                } else {
                    try await output.write(Array(ExportCSV.row(proof).utf8), to: sink)
                }
            }
            progress?(count, snapshot?.proofCount ?? count)
        })
        try await output.flush(to: sink)
        return Summary(proofs: count, bytes: output.total, checkpoint: nil)
    }

    /// The ZIP bundle: each page of proofs packed concurrently on the CPU pool and written in
    /// order. Pages overlap: while one page is packed, the one before it is written and the next
    /// one fetched by the reader (at most three pages held), so the pool does not wait for the
    /// database. A second page packed ahead measured no better.
    func exportBundle(since: Date?, until: Date?, contents: ExportContents, progress: ((Int, Int) -> Void)?,
                      sink: ([UInt8]) async throws -> Void) async throws -> Summary {
        var packer = self.packer
        packer.contents = contents
        let exportedAt = Date()
        var bundle = BundleStreamWriter(modified: exportedAt, offload: offload)
        var signed: AuditCheckpoint?
        var total = 0
        var count = 0
        typealias Page = (task: Task<[BundleProofPacker.Packed], any Error>, proofs: Int)
        var packing: Page?
        // Held in `packing` from the moment it starts, so a failure anywhere stops it.
        defer { packing?.task.cancel() }
        /// Writes `page` once it is packed.
        func write(_ page: Page) async throws {
            let proofs = try await page.task.result.get()
            for packed in proofs { try await bundle.write(packed, to: sink) }
            count += page.proofs
            progress?(count, total)
        }
        /// Writes the page being packed, if any.
        func writePacked() async throws {
            guard let page = packing else { return }
            packing = nil
            try await write(page)
        }
        // The segments end at a stored checkpoint of this key that covers every exported proof
        // (the scheduled one just after the period), else at the export's own snapshot.
        let stored: AuditCheckpoint?
        do {
            stored = try await reader.read(since: since, until: until, start: { seen in
                // The heads of the export's own snapshot: the checkpoint covers exactly the events
                // (every exported proof's `proof_recorded` among them) that snapshot sees.
                signed = try AuditCheckpoint.sign(heads: seen.heads, key: key)
                total = seen.proofCount
            }, each: { proofs in
                let previous = packing
                packing = (Task { [packer] in try await pack(proofs, with: packer) }, proofs.count)
                if let previous { try await write(previous) }
            }, withSegments: true, storedCheckpointKey: key.publicKey.rawRepresentation, segment: { event in
                try await writePacked()
                try await bundle.write(event: event, to: sink)
            })
        } catch let broken as AuditSegment.Break {
            // The segments do not reach the heads the checkpoint signs: nothing is signed.
            throw ExportError.segmentMissesCheckpoint(chain: broken.chain, seq: broken.seq)
        }
        try await writePacked()
        guard let fresh = signed else { throw ExportError.noSnapshot }
        let checkpoint = stored ?? fresh
        try await bundle.finish(key: key, to: sink) { checksums in
            try ExportManifest(createdAt: exportedAt, since: since, until: until, proofCount: count, checkpoint: checkpoint,
                               checksums: checksums, contents: contents).encoded()
        }
        // Kept so `verify --database` checks it too (a stored one already is).
        if stored == nil { try await checkpoints.store(fresh) }
        return Summary(proofs: count, bytes: bundle.total, checkpoint: checkpoint)
    }

    /// Proofs packed by one job on the CPU pool: a job per proof spent a measurable share of the
    /// export handing work to and waking threads; a page of 64 still splits into more jobs than cores.
    static let proofsPerJob = 8

    /// `proofs` packed on the CPU pool, at most one job per core at once, in their order.
    func pack(_ proofs: [ExportedProof], with packer: BundleProofPacker) async throws -> [BundleProofPacker.Packed] {
        let offload = self.offload, sealer = self.sealer
        let batches = stride(from: 0, to: proofs.count, by: Self.proofsPerJob).map {
            Array(proofs[$0..<min($0 + Self.proofsPerJob, proofs.count)])
        }
        return try await withThrowingTaskGroup(of: (Int, [BundleProofPacker.Packed]).self) { group in
            var results = [[BundleProofPacker.Packed]](repeating: [], count: batches.count)
            var next = 0
            func submit() {
                guard next < batches.count else { return }
                let index = next, batch = batches[index]
                next += 1
                group.addTask { (index, try await offload.run { try batch.map { try packer.pack(try $0.opened(by: sealer)) } }) }
            }
            for _ in 0..<min(batches.count, CPUWorkPool.cores + 1) { submit() }
            while let (index, packed) = try await group.next() {
                results[index] = packed
                submit()
            }
            return results.flatMap { $0 }
        }
    }

    /// One NDJSON line: `{"delivery": {...}, "proof": <GET …/proof>}` with sorted keys.
    func metadataJSON(_ proof: ExportedProof) throws -> [UInt8] {
        var delivery: [String: Any] = ["reference": proof.metadata.deliveryReference, "recipient": ["name": proof.recipientName],
                                       "address": proof.address]
        delivery["destination"] = proof.destination.map { ["lat": $0.lat, "lon": $0.lon] as [String: Any] } ?? NSNull()
        let object: [String: Any] = ["delivery": delivery, "proof": ProofMetadataResource.object(proof.metadata)]
        return try SortedJSONWriter.encode(object)
    }
}

/// An export that could not be completed.
public enum ExportError: Error, CustomStringConvertible, Sendable {
    /// A stored proof's ink could not be parsed back for its SVG.
    case unreadableInk(reference: String, message: String)
    /// A proof does not verify against its audit event (or has none): the bundle is not signed.
    case proofFailsVerification(reference: String, failures: [ExportBundleVerifier.Failure])
    /// The audit chain read for the bundle does not link up to the head its checkpoint signs (an
    /// event changed, removed or reordered since the checkpoint): the bundle is not signed.
    case segmentMissesCheckpoint(chain: Int16, seq: Int64)
    /// The export's snapshot never opened.
    case noSnapshot

    public var description: String {
        switch self {
        case .unreadableInk(let reference, let message): "the stored ink of \(reference) could not be read: \(message)"
        case .proofFailsVerification(let reference, let failures):
            "refusing to sign a bundle: the proof of \(reference) fails verification: "
                + failures.map(\.description).joined(separator: "; ")
        case .segmentMissesCheckpoint(let chain, let seq):
            "refusing to sign a bundle: audit chain \(chain) does not link from seq \(seq) to the head its checkpoint signs"
        case .noSnapshot: "the export's snapshot did not open"
        }
    }
}
