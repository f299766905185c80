/// Where a delivery stands.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    /// No proof yet.
    case pending
    /// A proof was recorded.
    case delivered
}
