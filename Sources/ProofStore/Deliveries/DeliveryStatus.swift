/// Where a delivery stands: `pending`, then once and for good `delivered`, `failed` or `cancelled`
/// (migration 0014 refuses every other transition). Failed attempts leave it `pending`.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    /// No proof yet; attempts may have failed.
    case pending
    /// A proof was recorded.
    case delivered
    /// A dispatcher gave it up (returned to sender) after failed attempts.
    case failed
    /// A dispatcher cancelled it.
    case cancelled

    /// True for the statuses a delivery ends in without a proof.
    public var isClosed: Bool { self == .failed || self == .cancelled }
}
