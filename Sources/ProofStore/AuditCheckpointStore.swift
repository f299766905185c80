import Cryptography
import Foundation
import Postgres

/// Signs and keeps checkpoints of the audit chain (table `audit_checkpoints`, append-only).
public struct AuditCheckpointStore: Sendable {
    let database: PostgresClient
    let key: Ed25519PrivateKey

    /// Creates the store; checkpoints are signed with `key`.
    public init(database: PostgresClient, key: Ed25519PrivateKey) {
        self.database = database
        self.key = key
    }

    /// A checkpoint of the current head: the newest stored one when the head has not moved since
    /// and it was signed by this key, else a new one, stored before it is returned.
    public func current() async throws -> AuditCheckpoint {
        try await database.withTransaction { session in
            let head = try await Self.head(in: session)
            if let latest = try await Self.latest(in: session), latest.seq == head.seq, latest.headHash == head.hash,
               latest.publicKey == key.publicKey.rawRepresentation {
                return latest
            }
            return try await sign(seq: head.seq, headHash: head.hash, in: session)
        }
    }

    /// Signs `(seq, headHash)` and stores it in `session`'s transaction.
    func sign(seq: Int64, headHash: [UInt8], in session: PostgresSession) async throws -> AuditCheckpoint {
        let checkpoint = try AuditCheckpoint.sign(seq: seq, headHash: headHash, key: key)
        try await Self.store(checkpoint, in: session)
        return checkpoint
    }

    /// Stores a checkpoint signed elsewhere (e.g. for an export, from its snapshot's head).
    public func store(_ checkpoint: AuditCheckpoint) async throws {
        try await database.withTransaction { session in try await Self.store(checkpoint, in: session) }
    }

    static func store(_ checkpoint: AuditCheckpoint, in session: PostgresSession) async throws {
        try await session.execute("""
            INSERT INTO audit_checkpoints (seq, head_hash, signed_at, algorithm, public_key, signature)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [checkpoint.seq, PostgresBytes(checkpoint.headHash), AuditTimestamp(micros: checkpoint.signedAtMicros),
                  AuditCheckpoint.algorithm, PostgresBytes(checkpoint.publicKey), PostgresBytes(checkpoint.signature)])
    }

    /// The chain head visible to `session` (seq 0 and the genesis hash when the chain is empty).
    /// Takes no lock: what it returns was committed.
    public static func head(in session: PostgresSession) async throws -> (seq: Int64, hash: [UInt8]) {
        guard let row = try await session.query("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").first else {
            return (0, AuditEvent.genesisHash)
        }
        return (try row.decode(Int64.self, 0), try row.decode([UInt8].self, 1))
    }

    /// The newest stored checkpoint, if any.
    static func latest(in session: PostgresSession) async throws -> AuditCheckpoint? {
        try await session.query("""
            SELECT seq, head_hash, signed_at, public_key, signature FROM audit_checkpoints ORDER BY seq DESC, id DESC LIMIT 1
            """).first.map(checkpoint)
    }

    static func checkpoint(_ row: PostgresRow) throws -> AuditCheckpoint {
        AuditCheckpoint(seq: try row.decode(Int64.self, 0), headHash: try row.decode([UInt8].self, 1),
                        signedAtMicros: try row.decode(AuditTimestamp.self, 2).micros, publicKey: try row.decode([UInt8].self, 3),
                        signature: try row.decode([UInt8].self, 4))
    }
}
