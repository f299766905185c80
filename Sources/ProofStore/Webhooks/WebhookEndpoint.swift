import Foundation

/// A webhook subscription as stored (its secret stays sealed; the Webhooks module opens it).
public struct WebhookEndpoint: Sendable, Equatable {
    public var id: UUID
    public var url: String
    public var description: String
    public var events: [WebhookEventType]
    /// The signing secret, sealed (AES-256-GCM, bound to `id`).
    public var secretSealed: [UInt8]
    /// The secret before the last rotation, still signing until `previousSecretUntil`.
    public var previousSecretSealed: [UInt8]?
    public var previousSecretUntil: Date?
    public var enabled: Bool
    /// `admin` (paused by an admin) or `failing` (the sender gave up on it); nil while enabled.
    public var disabledReason: String?
    public var disabledAt: Date?
    /// When the current run of failed attempts began; nil after a success.
    public var failingSince: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, url: String, description: String, events: [WebhookEventType], secretSealed: [UInt8],
                previousSecretSealed: [UInt8]?, previousSecretUntil: Date?, enabled: Bool, disabledReason: String?,
                disabledAt: Date?, failingSince: Date?, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.url = url
        self.description = description
        self.events = events
        self.secretSealed = secretSealed
        self.previousSecretSealed = previousSecretSealed
        self.previousSecretUntil = previousSecretUntil
        self.enabled = enabled
        self.disabledReason = disabledReason
        self.disabledAt = disabledAt
        self.failingSince = failingSince
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// What an admin may change on an endpoint (nil: unchanged).
public struct WebhookEndpointChange: Sendable, Equatable {
    public var url: String?
    public var description: String?
    public var events: [WebhookEventType]?
    /// `true` re-enables (also an endpoint the sender disabled), `false` pauses.
    public var enabled: Bool?

    public init(url: String? = nil, description: String? = nil, events: [WebhookEventType]? = nil, enabled: Bool? = nil) {
        self.url = url
        self.description = description
        self.events = events
        self.enabled = enabled
    }
}
