import Cryptography
import Foundation
import Postgres

/// Walks the audit chain in constant memory and re-hashes every proof it vouches for.
///
/// Events are read by ascending seq in pages of ``pageSize``, inside one REPEATABLE READ, READ ONLY
/// transaction (one consistent snapshot, no locks that block appends). For every event it checks,
/// in this order: the seq follows the previous one (`gap`), the stored hash is
/// `SHA-256(prev_hash || canonical bytes)` (`hash_mismatch`), and `prev_hash` is the previous
/// event's hash (`prev_mismatch`). For a `proof_recorded` event it then reads the proof (in batches
/// of ``proofBatchSize``), re-hashes its original body and its PNG, and compares both with the
/// digests in the event's details and the digests stored in the proofs table.
public struct AuditVerifier: Sendable {
    let database: PostgresClient
    /// Events read per round trip.
    public var pageSize: Int
    /// Proofs (body + PNG) read per round trip.
    public var proofBatchSize: Int

    /// Creates a verifier over `database`.
    public init(database: PostgresClient, pageSize: Int = 1_000, proofBatchSize: Int = 50) {
        self.database = database
        self.pageSize = pageSize
        self.proofBatchSize = proofBatchSize
    }

    /// Verifies the whole chain, then every stored signed checkpoint against it: each must carry a
    /// valid Ed25519 signature (by one of `trustedPublicKeys` when given) and name a `seq` the chain
    /// still has, with the same hash — a checkpoint beyond the chain's end means its tail was removed.
    public func verify(trustedPublicKeys: [Ed25519PublicKey] = []) async throws -> AuditVerification {
        try await database.withTransaction(isolation: "REPEATABLE READ, READ ONLY") { session in
            var expectedSeq: Int64 = 1
            var prevHash = AuditEvent.genesisHash
            var lastSeq: Int64 = 0
            while true {
                let events = try await AuditLog.page(after: lastSeq, limit: pageSize, in: session)
                if events.isEmpty { break }
                let digests = try await proofDigests(for: events, in: session)
                for event in events {
                    if let failure = check(event, expectedSeq: expectedSeq, prevHash: prevHash, digests: digests) {
                        return .broken(failure)
                    }
                    expectedSeq = event.seq + 1
                    prevHash = event.hash
                    lastSeq = event.seq
                }
            }
            if let failure = try await checkCheckpoints(chainLength: expectedSeq - 1, trusted: trustedPublicKeys, in: session) {
                return .broken(failure)
            }
            return .ok(count: expectedSeq - 1, headHash: prevHash)
        }
    }

    /// Checks the stored checkpoints (in pages, oldest first) against the chain just verified.
    func checkCheckpoints(chainLength: Int64, trusted: [Ed25519PublicKey], in session: PostgresSession) async throws -> AuditBreak? {
        var lastID: Int64 = 0
        while true {
            let rows = try await session.query("""
                SELECT c.id, c.seq, c.head_hash, c.signed_at, c.public_key, c.signature, e.hash
                FROM audit_checkpoints c LEFT JOIN audit_events e ON e.seq = c.seq
                WHERE c.id > $1 ORDER BY c.id LIMIT $2
                """, [lastID, pageSize]).rows
            if rows.isEmpty { return nil }
            for row in rows {
                lastID = try row.decode(Int64.self, 0)
                let checkpoint = AuditCheckpoint(
                    seq: try row.decode(Int64.self, 1), headHash: try row.decode([UInt8].self, 2),
                    signedAtMicros: try row.decode(AuditTimestamp.self, 3).micros, publicKey: try row.decode([UInt8].self, 4),
                    signature: try row.decode([UInt8].self, 5))
                let subject = "checkpoint:\(lastID)"
                if !checkpoint.hasValidSignature {
                    return AuditBreak(seq: checkpoint.seq, kind: .checkpointSignatureInvalid, expected: "a valid Ed25519 signature",
                                      found: checkpoint.signature.hexString, subject: subject)
                }
                if !trusted.isEmpty, !trusted.contains(where: { $0.rawRepresentation == checkpoint.publicKey }) {
                    return AuditBreak(seq: checkpoint.seq, kind: .checkpointUntrustedKey,
                                      expected: trusted.map { $0.rawRepresentation.hexString }.joined(separator: ","),
                                      found: checkpoint.publicKey.hexString, subject: subject)
                }
                let chainHash: [UInt8]? = checkpoint.seq == 0 ? AuditEvent.genesisHash : try row.decode([UInt8]?.self, 6)
                if checkpoint.seq > chainLength || chainHash != checkpoint.headHash {
                    return AuditBreak(seq: checkpoint.seq, kind: .checkpointMismatch, expected: checkpoint.headHash.hexString,
                                      found: checkpoint.seq > chainLength ? "chain ends at \(chainLength)" : (chainHash?.hexString ?? ""),
                                      subject: subject)
                }
            }
        }
    }

    /// Digests recomputed from the stored bytes, and those stored beside them.
    struct ProofDigests {
        var body: [UInt8]
        var png: [UInt8]
        var storedBody: [UInt8]
        var storedPNG: [UInt8]
    }

    func check(_ event: AuditEvent, expectedSeq: Int64, prevHash: [UInt8], digests: [UUID: ProofDigests]) -> AuditBreak? {
        if event.seq != expectedSeq {
            return AuditBreak(seq: expectedSeq, kind: .gap, expected: String(expectedSeq), found: String(event.seq), subject: event.subject)
        }
        let recomputed = event.recomputedHash
        if recomputed != event.hash {
            return AuditBreak(seq: event.seq, kind: .hashMismatch, expected: recomputed.hexString, found: event.hash.hexString,
                              subject: event.subject)
        }
        if event.prevHash != prevHash {
            return AuditBreak(seq: event.seq, kind: .prevMismatch, expected: prevHash.hexString, found: event.prevHash.hexString,
                              subject: event.subject)
        }
        guard event.action == AuditAction.proofRecorded.rawValue else { return nil }
        let details = event.details
        let proofText = details["proof_id"] ?? ""
        guard let proofID = UUID(uuidString: proofText), let stored = digests[proofID] else {
            return AuditBreak(seq: event.seq, kind: .proofMissing, expected: proofText, found: "", subject: event.subject,
                              proofID: proofText)
        }
        let recordedBody = details["points_sha256"] ?? ""
        for found in [stored.storedBody.hexString, stored.body.hexString] where found != recordedBody {
            return AuditBreak(seq: event.seq, kind: .proofBodyMismatch, expected: recordedBody, found: found, subject: event.subject,
                              proofID: proofText)
        }
        let recordedPNG = details["png_sha256"] ?? ""
        for found in [stored.storedPNG.hexString, stored.png.hexString] where found != recordedPNG {
            return AuditBreak(seq: event.seq, kind: .proofPNGMismatch, expected: recordedPNG, found: found, subject: event.subject,
                              proofID: proofText)
        }
        return nil
    }

    func proofDigests(for events: [AuditEvent], in session: PostgresSession) async throws -> [UUID: ProofDigests] {
        let ids = events.filter { $0.action == AuditAction.proofRecorded.rawValue }
            .compactMap { $0.details["proof_id"].flatMap(UUID.init(uuidString:)) }
        var digests: [UUID: ProofDigests] = [:]
        var start = 0
        while start < ids.count {
            let batch = ids[start..<min(start + proofBatchSize, ids.count)]
            start += proofBatchSize
            let result = try await session.query("""
                SELECT id, body, png, body_sha256, png_sha256 FROM proofs WHERE id = ANY(string_to_array($1, ',')::uuid[])
                """, [batch.map { $0.uuidString.lowercased() }.joined(separator: ",")])
            for row in result.rows {
                digests[try row.decode(UUID.self, 0)] = ProofDigests(
                    body: SHA256.hash(try row.decode([UInt8].self, 1)), png: SHA256.hash(try row.decode([UInt8].self, 2)),
                    storedBody: try row.decode([UInt8].self, 3), storedPNG: try row.decode([UInt8].self, 4))
            }
        }
        return digests
    }
}
