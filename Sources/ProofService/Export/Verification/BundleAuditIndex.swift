import Archive
import Foundation
import ProofStore

/// The first half of verifying a version 3 bundle: re-hashes every event of the audit segments
/// (`audit/chain-CC/*.ndjson`, by chain and then seq), checks that each links to the one before it
/// and that each chain's segment ends exactly at the head the signed checkpoint names — which
/// proves every event in it is in the log the checkpoint covers — and indexes the
/// `proof_recorded` events by proof id for ``BundleProofScan`` (``BundleEventIndex``).
/// Segment files are read, parsed and re-hashed a batch at a time on all cores
/// (``BundleParallelMap``) while the batch before is checked in order; each file's own SHA-256 is
/// kept (``BundleEventIndex/segmentDigests``) for the checksums, so the proof scan does not
/// inflate the segments again.
enum BundleAuditIndex {
    /// One line of a segment file, read and re-hashed: only what the links need is kept (not the
    /// event's text), so a batch of files holds a few hundred bytes per event.
    enum Line: Sendable {
        case unreadable
        /// A line over ``lineLimit`` bytes, not parsed.
        case tooLong
        case event(Link, hashMatches: Bool, recomputed: [UInt8], recorded: (UUID, RecordedEventDigests)?)
        /// Lines past ``BundleLayout/eventsPerFile``, not parsed: their count.
        case tooMany(Int)
    }

    /// What the chain check needs of an event.
    struct Link: Sendable {
        var seq: Int64
        var chain: Int16
        var hash: [UInt8]
        var prevHash: [UInt8]
    }

    /// Longest line parsed (our events are a few hundred bytes; a parsed line takes several times
    /// its size while it is hashed).
    static let lineLimit = 1 << 20

    /// One segment file, read: its size and SHA-256, and its lines.
    struct Segment: Sendable {
        var file: BundleProofScan.ReadEntry
        var lines: [Line]
    }

    /// Largest segment file read (a file holds at most ``BundleLayout/eventsPerFile`` events, about
    /// a megabyte): each is read whole, a few at once, so a hostile one must not be a gigabyte.
    static let segmentLimit = 64 << 20

    /// Most segment files read (each holds up to 1,000 events: a bundle of 100 million events has
    /// 100,000); their names, entries and digests are held for the proof scan.
    static let segmentFileLimit = 100_000

    /// The events of the segments' `proof_recorded` events, by proof id; not yet sealed (``seal(_:report:)``).
    static func build(_ archive: ZipArchiveReader, segments: [(name: String, entry: ZipArchiveReader.Entry)], heads: [AuditChainHead],
                      report: inout ExportBundleVerifier.Report) -> BundleEventIndex {
        func fail(_ file: String, _ reason: String) { report.add(.init(file: file, reason: reason)) }
        let signed = Dictionary(heads.map { ($0.chain, $0) }, uniquingKeysWith: { first, _ in first })
        var index = BundleEventIndex(archive: archive)
        var chain: Int16?
        var last: (seq: Int64, hash: [UInt8])?
        var lastFile = ""
        /// The running chain's segment must end at its signed head.
        func closeChain() {
            guard let chain else { return }
            guard let head = signed[chain] else {
                fail(lastFile, "chain \(chain) is not in the checkpoint")
                return
            }
            if let last, last.seq != head.seq || last.hash != head.hash {
                fail(lastFile, "chain \(chain)'s segment ends at seq \(last.seq) (\(last.hash.hexString)), but the checkpoint signs "
                     + "its head as seq \(head.seq) (\(head.hash.hexString))")
            }
        }
        // Six files per core at once: each is up to 1,000 parsed events, so a batch stays a few
        // megabytes. The next batch is read while this one is applied: at most two are held.
        // Each batch ends in a wait for its slowest file; with two per core, a timeline showed the
        // cores idle for a tenth of the segments' reading.
        let batchSize = 6 * CPUWorkPool.cores
        func start(_ batchStart: Int) -> BundleParallelMap.Pending<Result<Segment, ZipArchiveReader.Failure>>? {
            guard batchStart < segments.count else { return nil }
            let batch = Array(segments[batchStart..<min(segments.count, batchStart + batchSize)])
            return BundleParallelMap.start(batch.count) { Self.read(archive, batch[$0].entry) }
        }
        var reading = start(0)
        for batchStart in stride(from: 0, to: segments.count, by: batchSize) {
            let files = reading?.wait() ?? []
            reading = start(batchStart + batchSize)
            for ((name, entry), read) in zip(segments[batchStart...], files) {
                guard let fileChain = chainNumber(name) else {
                    fail(name, "is not an audit segment file (audit/chain-CC/SEQ.ndjson)")
                    continue
                }
                if fileChain != chain {
                    closeChain()
                    chain = fileChain
                    last = nil
                }
                lastFile = name
                if let firstSeq = Int64(name.split(separator: "/").last?.dropLast(7) ?? "") {
                    index.files[fileChain, default: []].append((firstSeq: firstSeq, entry: entry))
                }
                let segment: Segment
                switch read {
                case .failure(let failure):
                    fail(name, failure.message)
                    continue
                case .success(let read): segment = read
                }
                index.segmentDigests[entry.localHeaderOffset] = (entry, segment.file)
                for line in segment.lines {
                    let event: Link, hashMatches: Bool, recomputed: [UInt8], recorded: (UUID, RecordedEventDigests)?
                    switch line {
                    case .event(let link, let matches, let hash, let digests): (event, hashMatches, recomputed, recorded) = (link, matches, hash, digests)
                    case .unreadable:
                        fail(name, "a line is not an audit event")
                        continue
                    case .tooLong:
                        fail(name, "a line is longer than \(Self.lineLimit) bytes")
                        continue
                    case .tooMany(let count):
                        fail(name, "holds \(count) lines more than the \(BundleLayout.eventsPerFile) events a segment file holds")
                        continue
                    }
                    report.auditEvents += 1
                    if event.chain != fileChain { fail(name, "event seq \(event.seq) is on chain \(event.chain), not \(fileChain)") }
                    if !hashMatches {
                        fail(name, "event seq \(event.seq): its hash \(event.hash.hexString) is not SHA-256(prev_hash || its fields) "
                             + recomputed.hexString + ": the event was altered")
                    }
                    if let last, event.prevHash != last.hash || event.seq <= last.seq {
                        fail(name, "event seq \(event.seq) does not follow seq \(last.seq) of its chain (prev_hash \(event.prevHash.hexString))")
                    }
                    last = (event.seq, event.hash)
                    if let recorded { index.insert(recorded.0, recorded.1) }
                }
            }
        }
        closeChain()
        return index
    }

    /// Seals `index` (``BundleEventIndex/seal(duplicate:)``), reporting each proof's second event.
    /// Left to the proof scan, which calls it once the first proofs are being read, so the
    /// workers are not idle while this thread seals.
    static func seal(_ index: inout BundleEventIndex, report: inout ExportBundleVerifier.Report) {
        // A proof's second event is found when the index is sealed (it lives in a file, not a
        // dictionary). A forged bundle can repeat one event a million times: past the report's
        // limit they are only counted, so the segment file is looked up only for those listed.
        let files = index.files
        index.seal { id, chain, seq in
            let file = report.isFull ? "audit/" : BundleEventIndex.file(in: files, chain: chain, seq: seq)?.name ?? "audit/"
            report.add(.init(file: file, reason: "proof \(id.lowercasedText) has two proof_recorded events"))
        }
    }

    /// One segment file, its lines parsed and re-hashed (the work that runs in parallel).
    static func read(_ archive: ZipArchiveReader, _ entry: ZipArchiveReader.Entry) -> Result<Segment, ZipArchiveReader.Failure> {
        Result { () throws(ZipArchiveReader.Failure) in
            // No CRC-32: the file's SHA-256 is checked against the signed checksums (as a proof's files are, BundleProofScan).
            let contents = try archive.contents(of: entry, limit: segmentLimit, checkingCRC: false)
            let (kept, more) = Self.lines(contents, limit: BundleLayout.eventsPerFile)
            var lines = kept.map { line in
                guard line.count <= lineLimit else { return Line.tooLong }
                guard let event = try? BundleEventLine.parse(line).event else { return Line.unreadable }
                let recomputed = event.recomputedHash
                return .event(Link(seq: event.seq, chain: event.chain, hash: event.hash, prevHash: event.prevHash),
                              hashMatches: recomputed == event.hash, recomputed: recomputed, recorded: RecordedEventDigests.of(event))
            }
            if more > 0 { lines.append(.tooMany(more)) }
            return Segment(file: BundleProofScan.ReadEntry(bytes: contents.count, sha256: Digest32.of(contents)), lines: lines)
        }
    }

    /// The non-empty lines of `contents`, at most `limit` of them, and how many more there are
    /// (counted, not kept). Split at `\n` with `memchr`: the generic `split` compared byte by
    /// byte through a closure.
    static func lines(_ contents: [UInt8], limit: Int = .max) -> (lines: [ArraySlice<UInt8>], more: Int) {
        var lines: [ArraySlice<UInt8>] = []
        var more = 0
        contents.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                let found = memchr(base + start, 0x0A, bytes.count - start)
                let end = found.map { base.distance(to: UnsafeRawPointer($0)) } ?? bytes.count
                if end > start {
                    if lines.count < limit { lines.append(contents[start..<end]) } else { more += 1 }
                }
                start = end + 1
            }
        }
        return (lines, more)
    }

    /// `CC` of `audit/chain-CC/…`.
    static func chainNumber(_ name: String) -> Int16? {
        let parts = name.split(separator: "/")
        guard parts.count == 3, parts[1].hasPrefix("chain-"), parts[2].hasSuffix(".ndjson") else { return nil }
        return Int16(parts[1].dropFirst(6))
    }
}
