import Cryptography
import Foundation
import Postgres

/// The scheduled checkpoint: signed by one replica at a time, and only when a chain has moved.
extension AuditCheckpointStore {
    /// The transaction-scoped advisory lock key that lets one replica at a time sign a scheduled
    /// checkpoint (an arbitrary constant: "CSCHKPT1" as ASCII).
    public static let scheduleLockKey: Int64 = 0x4353_4348_4B50_5431

    /// Signs and stores a checkpoint of every chain's head unless another replica is signing one
    /// right now (the advisory lock is taken), there is no event yet, or no head moved since the
    /// newest stored checkpoint signed by this key: then `nil`. The lock is held until the transaction ends, so two replicas
    /// waking together never both sign the same heads.
    public func signIfMoved() async throws -> StoredCheckpoint? {
        try await database.withTransaction(retryingStalePlans: true) { session -> StoredCheckpoint? in
            let locked = try await session.query("SELECT pg_try_advisory_xact_lock(\(Self.scheduleLockKey)) AS locked").first
            guard try locked?.decode(Bool.self, "locked") == true else { return nil }
            let heads = try await Self.heads(in: session)
            if heads.allSatisfy({ $0.seq == 0 }) { return nil }  // no event yet: nothing to vouch for
            if let latest = try await Self.latest(in: session), latest.version == 2, latest.heads == heads,
               latest.publicKey == key.publicKey.rawRepresentation {
                return nil
            }
            let checkpoint = try AuditCheckpoint.sign(heads: heads, key: key)
            return StoredCheckpoint(id: try await Self.storeReturningID(checkpoint, in: session), checkpoint: checkpoint)
        }
    }

    /// Stores `checkpoint` and returns its row id.
    static func storeReturningID(_ checkpoint: AuditCheckpoint, in session: PostgresSession) async throws -> Int64 {
        let headHash = checkpoint.version == 1 ? PostgresBytes(checkpoint.headHash) : nil
        let heads = checkpoint.version == 2 ? PostgresBytes(AuditChainHead.encode(checkpoint.heads)) : nil
        let row = try await session.query("""
            INSERT INTO audit_checkpoints (version, seq, head_hash, heads, signed_at, algorithm, public_key, signature)
            VALUES (\(Int16(checkpoint.version))::smallint, \(checkpoint.seq), \(headHash)::bytea, \(heads)::bytea,
                \(AuditTimestamp(micros: checkpoint.signedAtMicros)), \(AuditCheckpoint.algorithm), \(PostgresBytes(checkpoint.publicKey)),
                \(PostgresBytes(checkpoint.signature)))
            RETURNING id
            """).first
        guard let row else { throw AuditCheckpointError.notStored }
        return try row.decode(Int64.self, "id")
    }
}

/// A checkpoint operation the database did not complete as it should have.
public enum AuditCheckpointError: Error, Sendable, Equatable {
    /// The INSERT returned no row.
    case notStored
}
