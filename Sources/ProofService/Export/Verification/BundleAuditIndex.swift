import Archive
import Foundation
import ProofStore

/// The first half of verifying a version 3 bundle: re-hashes every event of the audit segments
/// (`audit/chain-CC/*.ndjson`, by chain and then seq), checks that each links to the one before it
/// and that each chain's segment ends exactly at the head the signed checkpoint names — which
/// proves every event in it is in the log the checkpoint covers — and indexes the
/// `proof_recorded` events by proof id for ``BundleProofScan`` (``BundleEventIndex``).
enum BundleAuditIndex {
    /// The events of the segments' `proof_recorded` events, by proof id.
    static func build(_ archive: ZipArchiveReader, segments: [(name: String, entry: ZipArchiveReader.Entry)], heads: [AuditChainHead],
                      report: inout ExportBundleVerifier.Report) -> BundleEventIndex {
        func fail(_ file: String, _ reason: String) { report.failures.append(.init(file: file, reason: reason)) }
        let signed = Dictionary(heads.map { ($0.chain, $0) }, uniquingKeysWith: { first, _ in first })
        var index = BundleEventIndex(archive: archive)
        var chain: Int16?
        var last: (seq: Int64, hash: [UInt8])?
        var lastFile = ""
        let decoder = JSONDecoder()
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
        for (name, entry) in segments {
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
            let contents: [UInt8]
            do {
                contents = try archive.contents(of: entry, limit: 256 << 20)
            } catch {
                fail(name, error.message)
                continue
            }
            for line in contents.split(separator: 0x0A, omittingEmptySubsequences: true) {
                guard let parsed = try? decoder.decode(BundleEventLine.self, from: Data(line)), let event = parsed.event else {
                    fail(name, "a line is not an audit event")
                    continue
                }
                report.auditEvents += 1
                if event.chain != fileChain { fail(name, "event seq \(event.seq) is on chain \(event.chain), not \(fileChain)") }
                if event.recomputedHash != event.hash {
                    fail(name, "event seq \(event.seq): its hash \(event.hash.hexString) is not SHA-256(prev_hash || its fields) "
                         + event.recomputedHash.hexString + ": the event was altered")
                }
                if let last, event.prevHash != last.hash || event.seq <= last.seq {
                    fail(name, "event seq \(event.seq) does not follow seq \(last.seq) of its chain (prev_hash \(event.prevHash.hexString))")
                }
                last = (event.seq, event.hash)
                if let recorded = RecordedEventDigests.of(event) {
                    if index.contains(recorded.0) { fail(name, "proof \(recorded.0.uuidString.lowercased()) has two proof_recorded events") }
                    index.insert(recorded.0, recorded.1)
                }
            }
        }
        closeChain()
        return index
    }

    /// `CC` of `audit/chain-CC/…`.
    static func chainNumber(_ name: String) -> Int16? {
        let parts = name.split(separator: "/")
        guard parts.count == 3, parts[1].hasPrefix("chain-"), parts[2].hasSuffix(".ndjson") else { return nil }
        return Int16(parts[1].dropFirst(6))
    }
}
