import Foundation

/// One event's delivery to one endpoint, as the admin API lists it.
public struct WebhookDeliveryRecord: Sendable, Equatable {
    public var id: UUID
    public var messageID: UUID
    public var eventType: String
    public var sequence: Int64
    /// `pending`, `succeeded` or `failed` (retries spent).
    public var state: String
    public var attemptCount: Int
    public var nextAttemptAt: Date
    public var createdAt: Date
    public var completedAt: Date?
    public var attempts: [WebhookAttempt]
}

/// One HTTP attempt.
public struct WebhookAttempt: Sendable, Equatable {
    public var attemptedAt: Date
    /// The receiver's status; nil when none arrived.
    public var statusCode: Int?
    public var latencyMilliseconds: Int
    public var error: String?
}
