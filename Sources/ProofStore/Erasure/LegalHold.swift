import Foundation

/// A delivery's legal hold (migration 0026): while it stands, nothing erases the delivery.
public struct LegalHold: Sendable, Equatable {
    public var reason: String
    public var heldBy: UUID
    public var heldAt: Date

    public init(reason: String, heldBy: UUID, heldAt: Date) {
        self.reason = reason
        self.heldBy = heldBy
        self.heldAt = heldAt
    }
}
