import Cryptography
import Foundation
import Postgres

/// The checks of checkpoints read back from witnesses (docs/audit.md, "Witnessed checkpoints").
/// A witness's copy is what an insider who controls the database cannot rewrite, so it is checked
/// against the database rather than the other way round; breaks name the file as `witness:<name>`.
extension AuditVerifier {
    /// Each witnessed checkpoint must carry a valid signature, by a trusted key when keys are given.
    static func checkSignatures(of witnessed: [WitnessedCheckpoint], trusted: [Ed25519PublicKey]) -> AuditBreak? {
        for entry in witnessed {
            let checkpoint = entry.checkpoint, subject = "witness:\(entry.name)"
            if !checkpoint.hasValidSignature {
                return AuditBreak(seq: checkpoint.seq, kind: .checkpointSignatureInvalid, expected: "a valid Ed25519 signature",
                                  found: checkpoint.signature.hexString, subject: subject)
            }
            if !trusted.isEmpty, !trusted.contains(where: { $0.rawRepresentation == checkpoint.publicKey }) {
                return AuditBreak(seq: checkpoint.seq, kind: .checkpointUntrustedKey, expected: "one of " + trusted.map(\.keyID).joined(separator: ", "),
                                  found: "key \(checkpoint.keyID) (\(checkpoint.publicKey.hexString))", subject: subject)
            }
        }
        return nil
    }

    /// Starts an incremental walk at `start`: each head it signs must be in the database with its
    /// hash (looked up, not recomputed: the history up to it is what the witness vouches for); the
    /// walk then trusts every chain up to that head. A chain the checkpoint does not name is walked whole.
    func begin(at start: WitnessedCheckpoint, walk: inout Walk, in session: PostgresSession) async throws -> AuditBreak? {
        let found = try await storedEvents(Set(start.checkpoint.heads.map(\.seq)), in: session)
        for chain in walk.heads.keys { walk.trustedThrough[chain] = 0 }
        for head in start.checkpoint.heads {
            guard walk.heads[head.chain] != nil else {
                return AuditBreak(seq: head.seq, kind: .witnessHeadMissing, expected: head.hash.hexString, found: "no chain \(head.chain)",
                                  subject: "witness:\(start.name)", chain: head.chain)
            }
            if head.seq > 0 {
                guard let event = found[head.seq], event.chain == head.chain, event.hash == head.hash else {
                    return AuditBreak(seq: head.seq, kind: .witnessHeadMissing, expected: head.hash.hexString,
                                      found: found[head.seq].map { "event \(head.seq) on chain \($0.chain) hash \($0.hash.hexString)" }
                                          ?? "no event \(head.seq)", subject: "witness:\(start.name)", chain: head.chain)
                }
                if head.chain == 0, event.encoding == AuditEvent.Encoding.v2.rawValue { walk.legacyOpen = false }
            }
            walk.heads[head.chain] = head
            walk.trustedThrough[head.chain] = head.seq
        }
        return nil
    }

    /// After the walk: every head of every witnessed checkpoint must be in the recomputed chain
    /// (passed by the walk, or at or below the trusted start with the same stored hash), and every
    /// witnessed checkpoint must still be in `audit_checkpoints`.
    func checkWitnessed(_ witnessed: [WitnessedCheckpoint], walk: Walk, in session: PostgresSession) async throws -> AuditBreak? {
        var earlier: Set<Int64> = []
        for entry in witnessed {
            for head in entry.checkpoint.anchoredHeads where head.seq > 0 && head.seq <= (walk.trustedThrough[head.chain] ?? 0) {
                earlier.insert(head.seq)
            }
        }
        let looked = try await storedEvents(earlier, in: session)
        for entry in witnessed {
            for head in entry.checkpoint.anchoredHeads {
                guard let chainEnd = walk.heads[head.chain] else {
                    return missingHead(head, in: entry, found: "no chain \(head.chain)")
                }
                if head.seq == 0 { continue }
                if head.seq <= (walk.trustedThrough[head.chain] ?? 0) {
                    if let event = looked[head.seq], event.chain == head.chain, event.hash == head.hash { continue }
                    return missingHead(head, in: entry, found: looked[head.seq].map { "event on chain \($0.chain) hash \($0.hash.hexString)" }
                                           ?? "no event \(head.seq)")
                }
                if let passed = walk.passed[head.seq], passed.chain == head.chain, passed.hash == head.hash { continue }
                let found = chainEnd.seq < head.seq ? "chain \(head.chain) ends at \(chainEnd.seq)"
                    : walk.passed[head.seq].map { "event on chain \($0.chain) hash \($0.hash.hexString)" } ?? "no event \(head.seq) in the chain"
                return missingHead(head, in: entry, found: found)
            }
        }
        return try await checkWitnessesStored(witnessed, in: session)
    }

    func missingHead(_ head: AuditChainHead, in entry: WitnessedCheckpoint, found: String) -> AuditBreak {
        AuditBreak(seq: head.seq, kind: .witnessHeadMissing, expected: head.hash.hexString, found: found, subject: "witness:\(entry.name)",
                   chain: head.chain)
    }

    /// Every witnessed checkpoint must be a row of `audit_checkpoints` (same signature), looked up
    /// by `seq` (indexed) in pages.
    func checkWitnessesStored(_ witnessed: [WitnessedCheckpoint], in session: PostgresSession) async throws -> AuditBreak? {
        var start = 0
        while start < witnessed.count {
            let batch = witnessed[start..<min(start + pageSize, witnessed.count)]
            start += pageSize
            let seqs = Set(batch.map(\.checkpoint.seq)).map(String.init).joined(separator: ",")
            let rows = try await session.query("""
                SELECT signature FROM audit_checkpoints WHERE seq = ANY(string_to_array(\(seqs), ',')::bigint[])
                """).rows
            let stored = Set(try rows.map { try $0.decode([UInt8].self, "signature") })
            if let missing = batch.first(where: { !stored.contains($0.checkpoint.signature) }) {
                return AuditBreak(seq: missing.checkpoint.seq, kind: .witnessCheckpointMissing,
                                  expected: "checkpoint signed at \(missing.checkpoint.signedAtMicros) µs in audit_checkpoints",
                                  found: "none with signature \(missing.checkpoint.signature.prefix(8).hexString)…", subject: "witness:\(missing.name)")
            }
        }
        return nil
    }

    /// The chain, stored hash and encoding of the events numbered `seqs`, by seq.
    func storedEvents(_ seqs: Set<Int64>, in session: PostgresSession) async throws -> [Int64: (chain: Int16, hash: [UInt8], encoding: Int16)] {
        var events: [Int64: (chain: Int16, hash: [UInt8], encoding: Int16)] = [:]
        let all = seqs.filter { $0 > 0 }.sorted()
        var start = 0
        while start < all.count {
            let batch = all[start..<min(start + pageSize, all.count)].map(String.init).joined(separator: ",")
            start += pageSize
            let rows = try await session.query("""
                SELECT seq, chain, hash, encoding FROM audit_events WHERE seq = ANY(string_to_array(\(batch), ',')::bigint[])
                """).rows
            for row in rows {
                let (seq, chain, hash, encoding) = try row.decode((Int64, Int64, [UInt8], Int64).self)
                events[seq] = (Int16(chain), hash, Int16(encoding))
            }
        }
        return events
    }
}
