/// What an API key may do.
public enum Role: String, Sendable, Codable, CaseIterable {
    /// Uploads proofs and reads deliveries.
    case courier
    /// Creates and reads deliveries and proofs.
    case dispatcher
    /// Reads everything, including the audit trail and exports.
    case auditor
    /// Everything.
    case admin
}
