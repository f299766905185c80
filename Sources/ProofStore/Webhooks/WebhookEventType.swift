/// The events a webhook endpoint may subscribe to (docs/webhooks.md has each payload).
public enum WebhookEventType: String, Sendable, CaseIterable, Codable {
    /// A delivery was created.
    case deliveryCreated = "delivery.created"
    /// A proof was recorded: the delivery is delivered (payload: the proof's links and digests).
    case deliveryDelivered = "delivery.delivered"
    /// A delivery attempt failed (recipient absent, refused…); recorded by the attempts use case.
    case deliveryAttemptFailed = "delivery.attempt_failed"
    /// A delivery was cancelled before it was delivered.
    case deliveryCancelled = "delivery.cancelled"
    /// A test event sent on an admin's request to one endpoint.
    case webhookTest = "webhook.test"
}
