import Cryptography
import Foundation
import Postgres

/// Signs and keeps checkpoints of the audit chains (table `audit_checkpoints`, append-only).
public struct AuditCheckpointStore: Sendable {
    let database: PostgresClient
    let key: Ed25519PrivateKey

    /// Creates the store; checkpoints are signed with `key`.
    public init(database: PostgresClient, key: Ed25519PrivateKey) {
        self.database = database
        self.key = key
    }

    /// A checkpoint of every chain's current head: the newest stored one when no head has moved
    /// since and it was signed by this key, else a new one, stored before it is returned.
    public func current() async throws -> AuditCheckpoint {
        try await database.withTransaction(retryingStalePlans: true) { session in
            let heads = try await Self.heads(in: session)
            if let latest = try await Self.latest(in: session), latest.version == 2, latest.heads == heads,
               latest.publicKey == key.publicKey.rawRepresentation {
                return latest
            }
            let checkpoint = try AuditCheckpoint.sign(heads: heads, key: key)
            try await Self.store(checkpoint, in: session)
            return checkpoint
        }
    }

    /// Stores a checkpoint signed elsewhere (e.g. for an export).
    public func store(_ checkpoint: AuditCheckpoint) async throws {
        try await database.withTransaction(retryingStalePlans: true) { session in try await Self.store(checkpoint, in: session) }
    }

    static func store(_ checkpoint: AuditCheckpoint, in session: PostgresSession) async throws {
        try await session.execute("""
            INSERT INTO audit_checkpoints (version, seq, head_hash, heads, signed_at, algorithm, public_key, signature)
            VALUES ($1::smallint, $2, $3::bytea, $4::bytea, $5, $6, $7, $8)
            """, [Int16(checkpoint.version), checkpoint.seq, checkpoint.version == 1 ? PostgresBytes(checkpoint.headHash) : nil,
                  checkpoint.version == 2 ? PostgresBytes(AuditChainHead.encode(checkpoint.heads)) : nil,
                  AuditTimestamp(micros: checkpoint.signedAtMicros), AuditCheckpoint.algorithm, PostgresBytes(checkpoint.publicKey),
                  PostgresBytes(checkpoint.signature)])
    }

    /// Every chain's head as `audit_chains` holds it, by ascending chain, read in one statement
    /// (one snapshot). Takes no lock: a head is moved in the transaction that appends its event,
    /// so a committed head always names a committed event.
    public static func heads(in session: PostgresSession) async throws -> [AuditChainHead] {
        try await session.query("SELECT chain, head_seq, head_hash FROM audit_chains ORDER BY chain").rows.map { row in
            AuditChainHead(chain: Int16(try row.decode(Int64.self, 0)), seq: try row.decode(Int64.self, 1), hash: try row.decode([UInt8].self, 2))
        }
    }

    /// The newest stored checkpoint, if any.
    static func latest(in session: PostgresSession) async throws -> AuditCheckpoint? {
        try await session.query("SELECT \(columns) FROM audit_checkpoints ORDER BY id DESC LIMIT 1").first.map { try checkpoint($0) }
    }

    static let columns = "version, seq, head_hash, heads, signed_at, public_key, signature"

    /// A checkpoint from ``columns`` starting at column `offset` of `row`.
    static func checkpoint(_ row: PostgresRow, from offset: Int = 0) throws -> AuditCheckpoint {
        let signedAt = try row.decode(AuditTimestamp.self, offset + 4).micros
        let publicKey = try row.decode([UInt8].self, offset + 5), signature = try row.decode([UInt8].self, offset + 6)
        if try row.decode(Int64.self, offset) == 1 {
            return AuditCheckpoint(seq: try row.decode(Int64.self, offset + 1), headHash: try row.decode([UInt8].self, offset + 2),
                                   signedAtMicros: signedAt, publicKey: publicKey, signature: signature)
        }
        let heads = AuditChainHead.decode(try row.decode([UInt8]?.self, offset + 3) ?? []) ?? []
        return AuditCheckpoint(heads: heads, signedAtMicros: signedAt, publicKey: publicKey, signature: signature)
    }
}
