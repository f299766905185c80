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
        _ = try await storeReturningID(checkpoint, in: session)
    }

    /// Every chain's head as `audit_chains` holds it, by ascending chain, read in one statement
    /// (one snapshot). Takes no lock: a head is moved in the transaction that appends its event,
    /// so a committed head always names a committed event.
    public static func heads(in session: PostgresSession) async throws -> [AuditChainHead] {
        try await session.query("SELECT chain, head_seq, head_hash FROM audit_chains ORDER BY chain").rows.map { row in
            let (chain, seq, hash) = try row.decode((Int64, Int64, [UInt8]).self)
            return AuditChainHead(chain: Int16(chain), seq: seq, hash: hash)
        }
    }

    /// The newest stored checkpoint, if any.
    static func latest(in session: PostgresSession) async throws -> AuditCheckpoint? {
        try await session.query("SELECT \(unescaped: columns) FROM audit_checkpoints ORDER BY id DESC LIMIT 1").first.map { try checkpoint($0) }
    }

    /// The columns ``checkpoint(_:)`` decodes by name.
    static let columns = "version, seq, head_hash, heads, signed_at, public_key, signature"

    /// A checkpoint from the ``columns`` of `row`, by name.
    static func checkpoint(_ row: PostgresRow) throws -> AuditCheckpoint {
        let signedAt = try row.decode(AuditTimestamp.self, "signed_at").micros
        let publicKey = try row.decode([UInt8].self, "public_key"), signature = try row.decode([UInt8].self, "signature")
        if try row.decode(Int64.self, "version") == 1 {
            return AuditCheckpoint(seq: try row.decode(Int64.self, "seq"), headHash: try row.decode([UInt8].self, "head_hash"),
                                   signedAtMicros: signedAt, publicKey: publicKey, signature: signature)
        }
        let heads = AuditChainHead.decode(try row.decode([UInt8]?.self, "heads") ?? []) ?? []
        return AuditCheckpoint(heads: heads, signedAtMicros: signedAt, publicKey: publicKey, signature: signature)
    }
}
