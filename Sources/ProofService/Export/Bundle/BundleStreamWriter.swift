import Archive
import Cryptography
import Foundation
import ProofStore

/// Writes a version 3 bundle to a sink in bounded memory: proofs as they are packed, a checksum
/// file every ``BundleLayout/checksumLines`` lines, the audit segments in files of
/// ``BundleLayout/eventsPerFile`` events per chain, then the manifest, its signature, the public
/// key and the central directory (which ``ZipArchiveWriter`` keeps in a temporary file). What it
/// holds at any time: one checksum file's lines, one file of events per chain, and the list of
/// checksum files (one line per thousand files) — never anything per proof.
struct BundleStreamWriter {
    private var zip = ZipArchiveWriter()
    private var output = ChunkedOutput()
    private var pendingLines: [UInt8] = []
    private var pendingLineCount = 0
    private(set) var checksumFiles: [ExportManifest.File] = []
    /// Per chain: the events not yet written, and the seq of the first of them.
    private var segments: [Int16: (first: Int64, lines: [UInt8], count: Int)] = [:]
    let modified: Date
    /// Runs checksumming and deflating off the caller's task (on the CPU work pool).
    let offload: BundleOffload

    init(modified: Date, offload: BundleOffload) {
        self.modified = modified
        self.offload = offload
    }

    /// Bytes handed on so far.
    var total: Int { output.total }

    /// Writes one packed proof.
    mutating func write(_ packed: BundleProofPacker.Packed, to sink: ([UInt8]) async throws -> Void) async throws {
        for entry in packed.entries {
            try await output.append(to: sink) { (buffer) throws(ZipWriteError) in try zip.add(entry, modified: packed.modified, appendingTo: &buffer) }
        }
        pendingLines += packed.checksumLines
        pendingLineCount += packed.entries.count
        if pendingLineCount >= BundleLayout.checksumLines { try await writeChecksums(to: sink) }
    }

    /// Adds one event of an audit segment (events come by ascending seq).
    mutating func write(event: AuditEvent, to sink: ([UInt8]) async throws -> Void) async throws {
        // Mutated in place: a copy taken out of the dictionary and stored back made every append
        // copy the whole segment so far (quadratic in the events per file).
        if segments[event.chain] == nil { segments[event.chain] = (first: event.seq, lines: [], count: 0) }
        segments[event.chain]!.lines += BundleEventLine.encode(event)
        segments[event.chain]!.count += 1
        if segments[event.chain]!.count >= BundleLayout.eventsPerFile { try await writeSegment(event.chain, to: sink) }
    }

    /// Writes the rest of the segments and checksums, then `manifest.json` made by `manifest` from
    /// the checksum files, `manifest.sig`, `public_key.pem` and the central directory.
    mutating func finish(key: Ed25519PrivateKey, to sink: ([UInt8]) async throws -> Void, manifest: ([ExportManifest.File]) throws -> [UInt8]) async throws {
        for chain in segments.keys.sorted() { try await writeSegment(chain, to: sink) }
        if pendingLineCount > 0 { try await writeChecksums(to: sink) }
        let manifestBytes = try manifest(checksumFiles)
        try await add("manifest.json", manifestBytes, compress: true, to: sink)
        try await add("manifest.sig", try key.signature(for: manifestBytes), compress: false, to: sink)
        try await add("public_key.pem", Array(try key.publicKey.pemRepresentation().utf8), compress: false, to: sink)
        var pending = output
        try await zip.finish { chunk in try await pending.write(chunk, to: sink) }
        try await pending.flush(to: sink)
        output = pending
    }

    private mutating func writeSegment(_ chain: Int16, to sink: ([UInt8]) async throws -> Void) async throws {
        guard let segment = segments.removeValue(forKey: chain), segment.count > 0 else { return }
        let name = BundleLayout.segmentFile(chain: chain, firstSeq: segment.first)
        try await add(name, segment.lines, compress: true, to: sink)
        let lines = segment.lines
        let digest = try await offload.run { Digest32.of(lines) }
        pendingLines += Array(digest.description.utf8) + Array(("  " + name + "\n").utf8)
        pendingLineCount += 1
    }

    private mutating func writeChecksums(to sink: ([UInt8]) async throws -> Void) async throws {
        let name = BundleLayout.checksumFile(checksumFiles.count + 1)
        let lines = pendingLines
        pendingLines = []
        pendingLineCount = 0
        try await add(name, lines, compress: true, to: sink)
        let digest = try await offload.run { SHA256.hex(lines) }
        checksumFiles.append(ExportManifest.File(path: name, bytes: lines.count, sha256: digest))
    }

    private mutating func add(_ name: String, _ contents: [UInt8], compress: Bool, to sink: ([UInt8]) async throws -> Void) async throws {
        let prepared = try await offload.run { ZipArchiveWriter.prepare(name, contents: contents, compress: compress) }
        try await output.append(to: sink) { (buffer) throws(ZipWriteError) in try zip.add(prepared, modified: modified, appendingTo: &buffer) }
    }
}
