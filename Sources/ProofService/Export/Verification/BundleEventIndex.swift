import Archive
import Cryptography
import Foundation
import ProofStore

/// The `proof_recorded` events of a bundle's audit segments, by proof id, in about 60 bytes each
/// (so a bundle of a million proofs is verified in well under 200 MB): per event its seq, chain,
/// which digests it carries, and one SHA-256 over its subject and digests (``binding(_:flags:)``).
/// A proof whose own digests give the same binding matches its event; only when they differ is
/// the event read again from its segment file, to name the file that differs.
struct BundleEventIndex {
    struct Entry {
        var seq: Int64
        var chain: Int16
        var flags: UInt8
        var binding: Digest32
    }

    static let hasPoints: UInt8 = 1, hasPNG: UInt8 = 2, hasInk: UInt8 = 4, hasMetadata: UInt8 = 8, hasDevice: UInt8 = 16
    private var entries: [UUID: Entry] = [:]
    /// The segment files, by chain, sorted by first seq: for re-reading one event.
    var files: [Int16: [(firstSeq: Int64, entry: ZipArchiveReader.Entry)]] = [:]
    let archive: ZipArchiveReader

    init(archive: ZipArchiveReader) {
        self.archive = archive
    }

    var count: Int { entries.count }

    func contains(_ id: UUID) -> Bool { entries[id] != nil }

    /// Indexes one event's digests.
    mutating func insert(_ id: UUID, _ event: RecordedEventDigests) {
        var flags: UInt8 = 0
        if event.points != nil { flags |= Self.hasPoints }
        if event.png != nil { flags |= Self.hasPNG }
        if event.ink != nil { flags |= Self.hasInk }
        if event.metadata != nil { flags |= Self.hasMetadata }
        if event.deviceKeyID != nil || event.deviceSignature != nil { flags |= Self.hasDevice }
        entries[id] = Entry(seq: event.seq, chain: event.chain, flags: flags, binding: Self.binding(event, flags: flags))
    }

    /// The event of proof `id` (taken out of the index: a second folder of the same proof finds
    /// none), given what the proof's files say: those digests themselves when they match the
    /// event, else the event as its segment file states it.
    mutating func take(_ id: UUID, actual: RecordedEventDigests) -> RecordedEventDigests? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        var claimed = actual
        claimed.seq = entry.seq
        claimed.chain = entry.chain
        if entry.flags & Self.hasPoints == 0 { claimed.points = nil }
        if entry.flags & Self.hasPNG == 0 { claimed.png = nil }
        if entry.flags & Self.hasInk == 0 { claimed.ink = nil }
        if entry.flags & Self.hasMetadata == 0 { claimed.metadata = nil }
        if entry.flags & Self.hasDevice == 0 { (claimed.deviceKeyID, claimed.deviceSignature) = (nil, nil) }
        if Self.binding(claimed, flags: entry.flags) == entry.binding { return claimed }
        return reread(id, seq: entry.seq, chain: entry.chain)
    }

    /// SHA-256 over the subject and the digests `flags` names.
    static func binding(_ event: RecordedEventDigests, flags: UInt8) -> Digest32 {
        var hasher = SHA256Hasher()
        hasher.update([flags])
        hasher.update(Array(event.subject.utf8) + [0])
        for digest in [event.points, event.png, event.ink, event.metadata] { if let digest { hasher.update(digest.bytes) } }
        if flags & hasDevice != 0 { hasher.update(Array((event.deviceKeyID ?? "").utf8) + [0] + Array((event.deviceSignature ?? "").utf8)) }
        return Digest32(hasher.finalize())
    }

    /// The event `seq` of `chain`, read again from the segment file that holds it.
    private func reread(_ id: UUID, seq: Int64, chain: Int16) -> RecordedEventDigests? {
        guard let file = files[chain]?.last(where: { $0.firstSeq <= seq }),
              let contents = try? archive.contents(of: file.entry, limit: 256 << 20) else { return nil }
        let decoder = JSONDecoder()
        for line in contents.split(separator: 0x0A) {
            guard let event = (try? decoder.decode(BundleEventLine.self, from: Data(line)))?.event, event.seq == seq,
                  let recorded = RecordedEventDigests.of(event), recorded.0 == id else { continue }
            return recorded.1
        }
        return nil
    }
}
