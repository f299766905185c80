import Foundation

/// A delivery the sender has leased: what to post, where, and with which secrets.
public struct ClaimedWebhookDelivery: Sendable, Equatable {
    public var id: UUID
    /// Attempts made before this one.
    public var attempts: Int
    /// When the event was queued for this endpoint (the retry window starts here).
    public var createdAt: Date
    /// The `webhook-id`: the same for every attempt of this event.
    public var messageID: UUID
    /// The exact body to post (and sign).
    public var payload: String
    public var endpointID: UUID
    public var url: String
    public var secretSealed: [UInt8]
    /// The previous secret while its grace period lasts (both sign).
    public var previousSecretSealed: [UInt8]?
    public var failingSince: Date?

    public init(id: UUID, attempts: Int, createdAt: Date, messageID: UUID, payload: String, endpointID: UUID, url: String,
                secretSealed: [UInt8], previousSecretSealed: [UInt8]?, failingSince: Date?) {
        self.id = id
        self.attempts = attempts
        self.createdAt = createdAt
        self.messageID = messageID
        self.payload = payload
        self.endpointID = endpointID
        self.url = url
        self.secretSealed = secretSealed
        self.previousSecretSealed = previousSecretSealed
        self.failingSince = failingSince
    }
}

/// What one attempt came to.
public struct WebhookAttemptOutcome: Sendable, Equatable {
    /// A 2xx answer.
    public var succeeded: Bool
    /// The receiver's status, nil when none arrived (refused, timed out, blocked).
    public var statusCode: Int?
    public var latencyMilliseconds: Int
    public var error: String?
    /// When to try again; nil on success, or when the retry window is spent.
    public var nextAttemptAt: Date?

    public init(succeeded: Bool, statusCode: Int?, latencyMilliseconds: Int, error: String?, nextAttemptAt: Date?) {
        self.succeeded = succeeded
        self.statusCode = statusCode
        self.latencyMilliseconds = latencyMilliseconds
        self.error = error
        self.nextAttemptAt = nextAttemptAt
    }
}
