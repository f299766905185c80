import Cryptography
import Foundation
import Postgres

/// Creates, lists, revokes and authenticates API keys.
///
/// A token is `cs_` followed by 43 base64url characters (32 random bytes). It is returned once by
/// ``create(name:role:)``; the database keeps only its SHA-256, so a stolen backup reveals no token.
public struct APIKeyRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// Prefix of every token (helps secret scanners recognise a leaked one).
    public static let tokenPrefix = "cs_"

    /// The `NOTIFY` channel on which every change of `api_keys` is announced (migration 0010's
    /// trigger), so servers caching look-ups forget them at once.
    public static let changeChannel = "countersign_api_keys"

    /// Makes a new key; returns it with its token, which is never available again.
    /// The key is committed with a `key_created` audit event (subject `key:<uuid>`) on behalf of `origin`.
    public func create(name: String, role: Role, origin: AuditOrigin = .cli) async throws -> (key: APIKey, token: String) {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmed.count) else {
            throw APIKeyError.invalidName("the key name must be 1 to 200 characters")
        }
        var random = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
        let token = Self.tokenPrefix + Self.base64URL(secret)
        let key = try await database.withTransaction(retryingStalePlans: true) { session in
            let result = try await session.query("""
                INSERT INTO api_keys (name, role, token_sha256) VALUES (\(trimmed), \(role.rawValue), \(PostgresBytes(Self.hash(token))))
                RETURNING \(unescaped: Self.columns)
                """)
            let key = try Self.key(result.rows[0])
            try await AuditLog.append(.keyCreated, subject: "key:\(key.id.uuidString.lowercased())",
                                      details: ["name": key.name, "role": key.role.rawValue], origin: origin, in: session)
            return key
        }
        return (key, token)
    }

    /// Every key, oldest first.
    public func list() async throws -> [APIKey] {
        try await database.query("SELECT \(unescaped: Self.columns) FROM api_keys ORDER BY created_at, id")
            .rows.map(Self.key)
    }

    /// Revokes key `id`; returns false when no such key exists. Revoking twice keeps the first time.
    /// The first revocation is committed with a `key_revoked` audit event on behalf of `origin`.
    @discardableResult
    public func revoke(id: UUID, origin: AuditOrigin = .cli) async throws -> Bool {
        try await database.withTransaction(retryingStalePlans: true) { session in
            // The runtime role has no UPDATE on api_keys: the SECURITY DEFINER function (0012) can
            // only set revoked_at once. NULL: no such key; true: revoked by this transaction (now()).
            let revokedNow = try await session.query("SELECT countersign_revoke_api_key(\(id)) AS revoked_now")
                .decode(Bool?.self, row: 0, column: "revoked_now")
            guard let revokedNow else { return false }
            if revokedNow {
                try await AuditLog.append(.keyRevoked, subject: "key:\(id.uuidString.lowercased())", origin: origin, in: session)
            }
            return true
        }
    }

    /// The actor for `token`, or `nil` when the token is unknown or revoked.
    public func authenticate(token: String) async throws -> Actor? {
        guard token.hasPrefix(Self.tokenPrefix), token.utf8.count < 200 else { return nil }
        let result = try await database.query(
            "SELECT id, name, role FROM api_keys WHERE token_sha256 = \(PostgresBytes(Self.hash(token))) AND revoked_at IS NULL")
        guard let row = result.first else { return nil }
        let (id, name, roleName) = try row.decode((UUID, String, String).self)
        guard let role = Role(rawValue: roleName) else { return nil }
        return Actor(keyID: id, name: name, role: role)
    }

    /// SHA-256 of the token's UTF-8 bytes.
    public static func hash(_ token: String) -> [UInt8] {
        SHA256.hash(Array(token.utf8))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The columns ``key(_:)`` decodes into a tuple, in this order.
    static let columns = "id, name, role, created_at, revoked_at"

    /// Decodes the ``columns`` of `row`.
    static func key(_ row: PostgresRow) throws -> APIKey {
        let (id, name, roleName, createdAt, revokedAt) = try row.decode((UUID, String, String, Date, Date?).self)
        guard let role = Role(rawValue: roleName) else {
            throw PostgresError(.decodingFailed, message: "unknown role \(roleName)")
        }
        return APIKey(id: id, name: name, role: role, createdAt: createdAt, revokedAt: revokedAt)
    }
}
