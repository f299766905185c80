import Cryptography
import Foundation
import Postgres

/// Registers, approves, revokes and reads device keys (migration 0017). Every change commits with
/// its audit event, which binds the key's public key: a key swapped in the table afterwards no
/// longer matches its events (`countersign verify --database`).
public struct DeviceKeyRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// Registers `publicKey` (32 bytes, already checked to be an Ed25519 key) for the courier key
    /// `owner`, as `registered`, with a `device_key_registered` event. A public key registered
    /// before (by anyone) is ``DeviceKeyError/publicKeyTaken``.
    public func register(publicKey: [UInt8], label: String, owner: UUID, origin: AuditOrigin) async throws -> DeviceKey {
        let id = UUID()
        do {
            return try await database.withTransaction(retryingStalePlans: true) { session in
                let row = try await session.query("""
                    INSERT INTO device_keys (id, registered_by, public_key, label)
                    VALUES (\(id), \(owner), \(PostgresBytes(publicKey)), \(label))
                    RETURNING \(unescaped: Self.columns)
                    """).rows[0]
                let key = try Self.key(row)
                try await AuditLog.append(.deviceKeyRegistered, subject: DeviceKey.subject(id),
                                          details: ["public_key": publicKey.hexString, "registered_by": owner.uuidString.lowercased(),
                                                    "label": label],
                                          origin: origin, in: session)
                return key
            }
        } catch let error as PostgresError where error.kind == .uniqueViolation && error.constraint == "device_keys_public_key_unique" {
            throw DeviceKeyError.publicKeyTaken
        }
    }

    /// Approves key `id` on behalf of `origin`'s actor; approving an approved key changes nothing
    /// (and appends no event). A revoked key is ``DeviceKeyError/revoked(_:)``.
    public func approve(_ id: UUID, origin: AuditOrigin) async throws -> DeviceKey {
        try await change(id, function: "countersign_approve_device_key", done: "approved_now", action: .deviceKeyApproved,
                         refuseRevoked: true, origin: origin)
    }

    /// Revokes key `id` for good; revoking twice keeps the first revocation.
    public func revoke(_ id: UUID, origin: AuditOrigin) async throws -> DeviceKey {
        try await change(id, function: "countersign_revoke_device_key", done: "revoked_now", action: .deviceKeyRevoked,
                         refuseRevoked: false, origin: origin)
    }

    /// One status change through its SECURITY DEFINER function (the runtime role has no UPDATE on
    /// the table), with its event when the call changed the row.
    private func change(_ id: UUID, function: String, done: String, action: AuditAction, refuseRevoked: Bool,
                        origin: AuditOrigin) async throws -> DeviceKey {
        try await database.withTransaction(retryingStalePlans: true) { session in
            let outcome: String?
            do {
                outcome = try await session.query("SELECT \(unescaped: function)(\(id), \(origin.credential?.token)::text) AS outcome")
                    .decode(String?.self, row: 0, column: "outcome")
            } catch let error as PostgresError where error.kind == .checkViolation && error.constraint == "device_key_actor_allowed" {
                throw DeviceKeyError.actorRefused
            }
            guard let outcome else { throw DeviceKeyError.notFound(id) }
            if refuseRevoked, outcome == DeviceKey.Status.revoked.rawValue { throw DeviceKeyError.revoked(id) }
            let key = try Self.key(try await session.query("SELECT \(unescaped: Self.columns) FROM device_keys WHERE id = \(id)").rows[0])
            if outcome == done {
                try await AuditLog.append(action, subject: DeviceKey.subject(id), details: ["public_key": key.publicKey.hexString],
                                          origin: origin, in: session)
            }
            return key
        }
    }

    /// Key `id`, or `nil`.
    public func find(_ id: UUID) async throws -> DeviceKey? {
        try await database.query("SELECT \(unescaped: Self.columns) FROM device_keys WHERE id = \(id)").first.map(Self.key)
    }

    /// The key holding `publicKey`, or `nil`.
    public func find(publicKey: [UInt8]) async throws -> DeviceKey? {
        try await database.query("SELECT \(unescaped: Self.columns) FROM device_keys WHERE public_key = \(PostgresBytes(publicKey))")
            .first.map(Self.key)
    }

    /// The keys registered by `owner` (every key when `nil`), newest first, at most `limit`.
    public func list(registeredBy owner: UUID?, status: DeviceKey.Status?, limit: Int) async throws -> [DeviceKey] {
        try await database.query("""
            SELECT \(unescaped: Self.columns) FROM device_keys
            WHERE (\(owner)::uuid IS NULL OR registered_by = \(owner)::uuid) AND (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)::text)
            ORDER BY registered_at DESC, id LIMIT \(limit)
            """).rows.map(Self.key)
    }

    /// The columns ``key(_:)`` decodes by name.
    static let columns = "id, registered_by, public_key, label, status, registered_at, approved_by, approved_at, revoked_by, revoked_at"

    /// Decodes the ``columns`` of `row`.
    static func key(_ row: PostgresRow) throws -> DeviceKey {
        let statusText: String = try row.decode("status")
        guard let status = DeviceKey.Status(rawValue: statusText) else {
            throw PostgresError(.decodingFailed, message: "unknown device key status \(statusText)")
        }
        return DeviceKey(id: try row.decode("id"), registeredBy: try row.decode("registered_by"), publicKey: try row.decode("public_key"),
                         label: try row.decode("label"), status: status, registeredAt: try row.decode("registered_at"),
                         approvedBy: try row.decode("approved_by"), approvedAt: try row.decode("approved_at"),
                         revokedBy: try row.decode("revoked_by"), revokedAt: try row.decode("revoked_at"))
    }
}
