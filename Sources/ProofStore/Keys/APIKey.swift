import Foundation

/// An API key as listed by `countersign keys list` (never the token: only its hash is stored).
public struct APIKey: Sendable, Equatable {
    /// The key's id (what `keys revoke` takes).
    public var id: UUID
    /// Human name, e.g. "van 12 handheld".
    public var name: String
    /// What the key may do.
    public var role: Role
    /// When it was made.
    public var createdAt: Date
    /// When it was revoked, if it was.
    public var revokedAt: Date?

    /// Creates a key description.
    public init(id: UUID, name: String, role: Role, createdAt: Date, revokedAt: Date?) {
        self.id = id
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// The caller identity this key authenticates as.
    public var actor: Actor { Actor(keyID: id, name: name, role: role) }
}
