import Foundation
import ProofService
import ProofStore

/// A webhook endpoint as the API shows it (never its secret, except `secret` once, on creation
/// and rotation).
struct WebhookResource: Encodable {
    var id: String
    var url: String
    var description: String
    var events: [String]
    var enabled: Bool
    var disabledReason: String?
    var disabledAt: String?
    var failingSince: String?
    var previousSecretValidUntil: String?
    var createdAt: String
    var updatedAt: String
    /// Only in the answers to creation and rotation.
    var secret: String?

    enum CodingKeys: String, CodingKey {
        case id, url, description, events, enabled, secret
        case disabledReason = "disabled_reason", disabledAt = "disabled_at", failingSince = "failing_since"
        case previousSecretValidUntil = "previous_secret_valid_until", createdAt = "created_at", updatedAt = "updated_at"
    }

    init(_ endpoint: WebhookEndpoint, secret: String? = nil) {
        id = endpoint.id.uuidString.lowercased()
        url = endpoint.url
        description = endpoint.description
        events = endpoint.events.map(\.rawValue)
        enabled = endpoint.enabled
        disabledReason = endpoint.disabledReason
        disabledAt = endpoint.disabledAt.map(Self.timestamp)
        failingSince = endpoint.failingSince.map(Self.timestamp)
        previousSecretValidUntil = endpoint.previousSecretUntil.flatMap { $0 > Date() ? Self.timestamp($0) : nil }
        createdAt = Self.timestamp(endpoint.createdAt)
        updatedAt = Self.timestamp(endpoint.updatedAt)
        self.secret = secret
    }

    static func path(_ id: UUID) -> String { "/v1/webhooks/\(id.uuidString.lowercased())" }

    static func timestamp(_ date: Date) -> String {
        RFC3339Timestamp.format(date)
    }
}

/// One delivery of an event to an endpoint, with its attempts.
struct WebhookDeliveryResource: Encodable {
    struct Attempt: Encodable {
        var attemptedAt: String
        var statusCode: Int?
        var latencyMs: Int
        var error: String?

        enum CodingKeys: String, CodingKey {
            case attemptedAt = "attempted_at", statusCode = "status_code", latencyMs = "latency_ms", error
        }
    }
    var id: String
    var webhookID: String
    var eventType: String
    var sequence: Int64
    var state: String
    var attemptCount: Int
    var nextAttemptAt: String?
    var createdAt: String
    var completedAt: String?
    var attempts: [Attempt]

    enum CodingKeys: String, CodingKey {
        case id, sequence, state, attempts
        case webhookID = "webhook_id", eventType = "event_type", attemptCount = "attempt_count", nextAttemptAt = "next_attempt_at"
        case createdAt = "created_at", completedAt = "completed_at"
    }

    init(_ record: WebhookDeliveryRecord) {
        id = record.id.uuidString.lowercased()
        webhookID = "msg_" + record.messageID.uuidString.lowercased()
        eventType = record.eventType
        sequence = record.sequence
        state = record.state
        attemptCount = record.attemptCount
        nextAttemptAt = record.state == "pending" ? WebhookResource.timestamp(record.nextAttemptAt) : nil
        createdAt = WebhookResource.timestamp(record.createdAt)
        completedAt = record.completedAt.map(WebhookResource.timestamp)
        attempts = record.attempts.map {
            Attempt(attemptedAt: WebhookResource.timestamp($0.attemptedAt), statusCode: $0.statusCode,
                    latencyMs: $0.latencyMilliseconds, error: $0.error)
        }
    }
}
