import Foundation

/// The authenticated caller of a request: which API key, under which role.
public struct Actor: Sendable, Equatable {
    /// The API key's id.
    public var keyID: UUID
    /// The key's human name (e.g. "van 12 handheld").
    public var name: String
    /// The key's role.
    public var role: Role

    /// Creates an actor.
    public init(keyID: UUID, name: String, role: Role) {
        self.keyID = keyID
        self.name = name
        self.role = role
    }
}
