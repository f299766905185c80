import Archive
import Foundation
import ProofStore

/// The `proof_recorded` events of a bundle's audit segments, by proof id, in a temporary file
/// (``BundleEventTable``), so memory does not grow with the bundle: per event its seq, chain,
/// which digests it carries, and one SHA-256 over its subject and digests (``binding(_:flags:)``).
/// A proof whose own digests give the same binding matches its event; only when they differ is
/// the event read again from its segment file, to name the file that differs. Built by
/// ``insert(_:_:)`` while the segments are read, then sealed (``seal(duplicate:)``) before the proofs are looked up.
struct BundleEventIndex {
    static let hasPoints: UInt8 = 1, hasPNG: UInt8 = 2, hasInk: UInt8 = 4, hasMetadata: UInt8 = 8, hasDevice: UInt8 = 16,
                hasMetadataCommitment: UInt8 = 32
    private let table: BundleEventTable?
    /// The first failure of the temporary file, if any (the verifier reports it; the bundle is then not valid).
    private(set) var failure: BundleEventTable.Failure?
    /// The segment files, by chain, sorted by first seq: for re-reading one event.
    var files: [Int16: [(firstSeq: Int64, entry: ZipArchiveReader.Entry)]] = [:]
    /// The segment files read whole while indexing, with their size and SHA-256: the proof scan
    /// takes these for the checksums instead of inflating the files again (one entry per thousand
    /// events).
    /// Keyed by local header offset (cheaper to hash than the entry) and checked against the entry.
    var segmentDigests: [UInt64: (entry: ZipArchiveReader.Entry, read: BundleProofScan.ReadEntry)] = [:]
    let archive: ZipArchiveReader

    init(archive: ZipArchiveReader) {
        self.archive = archive
        do throws(BundleEventTable.Failure) {
            table = try BundleEventTable()
        } catch {
            table = nil
            failure = error
        }
    }

    /// Indexes one event's digests.
    mutating func insert(_ id: UUID, _ event: RecordedEventDigests) {
        var flags: UInt8 = 0
        if event.points != nil { flags |= Self.hasPoints }
        if event.png != nil { flags |= Self.hasPNG }
        if event.ink != nil { flags |= Self.hasInk }
        if event.metadata != nil { flags |= Self.hasMetadata }
        if event.metadataCommitment != nil { flags |= Self.hasMetadataCommitment }
        if event.deviceKeyID != nil || event.deviceSignature != nil { flags |= Self.hasDevice }
        do throws(BundleEventTable.Failure) {
            try table?.append(.init(id: id, seq: event.seq, chain: event.chain, flags: flags, binding: Self.binding(event, flags: flags)))
        } catch {
            failure = failure ?? error
        }
    }

    /// Ends the inserts, calling `duplicate` with each event (proof id, chain, seq) whose proof already had one.
    mutating func seal(duplicate: (_ id: UUID, _ chain: Int16, _ seq: Int64) -> Void) {
        do throws(BundleEventTable.Failure) {
            try table?.seal { duplicate($0.id, $0.chain, $0.seq) }
        } catch {
            failure = failure ?? error
        }
    }

    /// The event of proof `id` (taken out of the index: a second folder of the same proof finds
    /// none), given what the proof's files say: those digests themselves when they match the
    /// event, else the event as its segment file states it.
    mutating func take(_ id: UUID, actual: RecordedEventDigests) -> RecordedEventDigests? {
        let found: BundleEventTable.Record?
        do throws(BundleEventTable.Failure) {
            found = try table?.take(id)
        } catch {
            failure = failure ?? error
            return nil
        }
        guard let entry = found else { return nil }
        var claimed = actual
        claimed.seq = entry.seq
        claimed.chain = entry.chain
        if entry.flags & Self.hasPoints == 0 { claimed.points = nil }
        if entry.flags & Self.hasPNG == 0 { claimed.png = nil }
        if entry.flags & Self.hasInk == 0 { claimed.ink = nil }
        if entry.flags & Self.hasMetadata == 0 { claimed.metadata = nil }
        if entry.flags & Self.hasMetadataCommitment == 0 { claimed.metadataCommitment = nil }
        if entry.flags & Self.hasDevice == 0 { (claimed.deviceKeyID, claimed.deviceSignature) = (nil, nil) }
        if Self.binding(claimed, flags: entry.flags) == entry.binding { return claimed }
        return reread(id, seq: entry.seq, chain: entry.chain)
    }

    /// The segment file holding event `seq` of `chain`.
    func file(chain: Int16, seq: Int64) -> ZipArchiveReader.Entry? {
        Self.file(in: files, chain: chain, seq: seq)
    }

    /// The file of `files` (as ``files`` holds them) that holds event `seq` of `chain`.
    static func file(in files: [Int16: [(firstSeq: Int64, entry: ZipArchiveReader.Entry)]], chain: Int16, seq: Int64) -> ZipArchiveReader.Entry? {
        files[chain]?.last(where: { $0.firstSeq <= seq })?.entry
    }

    /// SHA-256 over the subject and the digests `flags` names.
    static func binding(_ event: RecordedEventDigests, flags: UInt8) -> Digest32 {
        // One buffer, hashed once: it is computed twice per proof.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.append(flags)
        bytes += event.subject.utf8
        bytes.append(0)
        event.points?.append(to: &bytes)
        event.png?.append(to: &bytes)
        event.ink?.append(to: &bytes)
        event.metadata?.append(to: &bytes)
        event.metadataCommitment?.append(to: &bytes)
        if flags & hasDevice != 0 {
            bytes += (event.deviceKeyID ?? "").utf8
            bytes.append(0)
            bytes += (event.deviceSignature ?? "").utf8
        }
        return Digest32.of(bytes)
    }

    /// The event `seq` of `chain`, read again from the segment file that holds it.
    private func reread(_ id: UUID, seq: Int64, chain: Int16) -> RecordedEventDigests? {
        guard let file = file(chain: chain, seq: seq), let contents = try? archive.contents(of: file, limit: BundleAuditIndex.segmentLimit) else { return nil }
        for line in BundleAuditIndex.lines(contents, limit: BundleLayout.eventsPerFile).lines {
            guard let event = try? BundleEventLine.parse(line).event, event.seq == seq,
                  let recorded = RecordedEventDigests.of(event), recorded.0 == id else { continue }
            return recorded.1
        }
        return nil
    }
}
