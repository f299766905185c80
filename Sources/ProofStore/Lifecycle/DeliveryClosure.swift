import Foundation

/// How a delivery that ended without a proof ended: given up (`failed`) or `cancelled`.
public struct DeliveryClosure: Sendable, Equatable {
    /// When the service closed it.
    public var closedAt: Date
    /// The dispatcher's reason, as sent.
    public var reason: String
    /// The key that closed it (`nil` only for rows closed by hand in SQL with no key).
    public var closedBy: UUID?

    /// Creates a closure.
    public init(closedAt: Date, reason: String, closedBy: UUID?) {
        self.closedAt = closedAt
        self.reason = reason
        self.closedBy = closedBy
    }
}
