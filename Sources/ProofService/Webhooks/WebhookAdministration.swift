import Foundation
import ProofStore
import Webhooks

/// The admin use cases of webhooks: register, list, change, delete, rotate the secret, send a
/// test, list deliveries and retry one. Every change is audited by the repository, in its
/// transaction. Knows no HTTP type: refusals are ``ServiceError``s.
public struct WebhookAdministration: Sendable {
    let endpoints: WebhookEndpointRepository
    let queue: WebhookDeliveryQueue
    /// nil without `WEBHOOK_SECRETS_KEY`: every use case answers 503 `webhooks_not_configured`.
    let box: WebhookSecretBox?
    let urlGuard: WebhookURLGuard
    let rotationGrace: Duration

    public init(endpoints: WebhookEndpointRepository, queue: WebhookDeliveryQueue, box: WebhookSecretBox?,
                urlGuard: WebhookURLGuard, rotationGrace: Duration) {
        self.endpoints = endpoints
        self.queue = queue
        self.box = box
        self.urlGuard = urlGuard
        self.rotationGrace = rotationGrace
    }

    /// A new endpoint and its secret, which is shown this once.
    public struct Registered: Sendable {
        public var endpoint: WebhookEndpoint
        public var secret: String
    }

    struct CreateBody: Decodable {
        var url: String?
        var events: [String]?
        var description: String?
    }

    struct ChangeBody: Decodable {
        var url: String?
        var events: [String]?
        var description: String?
        var enabled: Bool?
    }

    func requireBox() throws(ServiceError) -> WebhookSecretBox {
        guard let box else {
            throw ServiceError(.unavailable, code: "webhooks_not_configured",
                               detail: "Webhooks need WEBHOOK_SECRETS_KEY (32 bytes, base64) to keep their signing secrets.")
        }
        return box
    }

    /// `POST /v1/webhooks`.
    public func register(_ body: [UInt8], origin: AuditOrigin) async throws -> Registered {
        // The body is judged first: bad input is a 4xx whether or not webhooks are configured.
        let input = try JSONEnvelopeDecoder.decode(CreateBody.self, from: body)
        var errors: [FieldError] = []
        if input.url == nil { errors.append(.init(field: "/url", message: "required", code: "missing_field")) }
        if input.events == nil { errors.append(.init(field: "/events", message: "required", code: "missing_field")) }
        let events = input.events.map { Self.events($0, errors: &errors) } ?? []
        let description = Self.description(input.description, errors: &errors)
        guard errors.isEmpty, let url = input.url else { throw ServiceError.validation("The webhook is not valid.", errors: errors) }
        let box = try requireBox()
        try await check(url)
        let id = UUID()
        let secret = try WebhookSecret.generate()
        let endpoint = try await endpoints.create(id: id, url: url, description: description ?? "", events: events,
                                                  secretSealed: try box.seal(secret, for: id), origin: origin)
        return Registered(endpoint: endpoint, secret: secret.text)
    }

    /// `GET /v1/webhooks`.
    public func list() async throws -> [WebhookEndpoint] {
        _ = try requireBox()
        return try await endpoints.list()
    }

    /// `GET /v1/webhooks/{id}`.
    public func find(_ id: UUID) async throws -> WebhookEndpoint {
        _ = try requireBox()
        guard let endpoint = try await endpoints.find(id) else { throw Self.notFound(id) }
        return endpoint
    }

    /// `PATCH /v1/webhooks/{id}`: any of url, events, description, enabled.
    public func change(_ id: UUID, _ body: [UInt8], origin: AuditOrigin) async throws -> WebhookEndpoint {
        let input = try JSONEnvelopeDecoder.decode(ChangeBody.self, from: body)
        var errors: [FieldError] = []
        let events = input.events.map { Self.events($0, errors: &errors) }
        let description = Self.description(input.description, errors: &errors)
        guard errors.isEmpty else { throw ServiceError.validation("The change is not valid.", errors: errors) }
        _ = try requireBox()
        if let url = input.url { try await check(url) }
        let change = WebhookEndpointChange(url: input.url, description: description, events: events, enabled: input.enabled)
        guard let endpoint = try await endpoints.update(id, change, origin: origin) else { throw Self.notFound(id) }
        return endpoint
    }

    /// `DELETE /v1/webhooks/{id}`.
    public func delete(_ id: UUID, origin: AuditOrigin) async throws {
        _ = try requireBox()
        guard try await endpoints.delete(id, origin: origin) else { throw Self.notFound(id) }
    }

    struct RotateBody: Decodable {
        var force: Bool?
    }

    /// `POST /v1/webhooks/{id}/rotate-secret`: a new secret, shown once; the old one signs too until
    /// the grace period ends. `body` is empty or `{"force": true|false}`.
    ///
    /// While an earlier rotation's grace period lasts, a second rotation is refused with 409
    /// `webhook_rotation_in_progress`: it would stop the secret that rotation promised for 24 h
    /// before its time, and receivers still on it would fail. `{"force": true}` rotates anyway (a
    /// leaked secret), ending that older secret now; the audit event says so.
    public func rotateSecret(_ id: UUID, _ body: [UInt8] = [], origin: AuditOrigin) async throws -> Registered {
        let force = body.isEmpty ? false : (try JSONEnvelopeDecoder.decode(RotateBody.self, from: body).force ?? false)
        let box = try requireBox()
        let secret = try WebhookSecret.generate()
        let until = Date().addingTimeInterval(Double(rotationGrace.components.seconds))
        switch try await endpoints.rotateSecret(id, newSealed: try box.seal(secret, for: id), previousValidUntil: until, force: force,
                                                origin: origin) {
        case .rotated(let endpoint):
            return Registered(endpoint: endpoint, secret: secret.text)
        case .notFound:
            throw Self.notFound(id)
        case .inProgress(let running):
            throw ServiceError(.conflict, code: "webhook_rotation_in_progress",
                               detail: "The previous secret of the last rotation signs until \(RFC3339Timestamp.format(running)), as that rotation announced; rotate again after then, or send {\"force\": true} to stop it now.")
        }
    }

    /// `POST /v1/webhooks/{id}/test`.
    public func sendTest(_ id: UUID, origin: AuditOrigin) async throws {
        _ = try requireBox()
        guard try await endpoints.sendTest(id, origin: origin) else { throw Self.notFound(id) }
    }

    /// `GET /v1/webhooks/{id}/deliveries`.
    public func deliveries(_ id: UUID, limit: Int, before: Date?) async throws -> [WebhookDeliveryRecord] {
        _ = try await find(id)
        return try await queue.deliveries(endpointID: id, limit: limit, before: before)
    }

    /// `POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry`.
    public func retry(_ id: UUID, delivery: UUID, origin: AuditOrigin) async throws {
        _ = try requireBox()
        guard try await queue.retry(delivery, endpointID: id, origin: origin) else {
            throw ServiceError(.notFound, code: "webhook_delivery_not_found", detail: "Webhook \(id.uuidString.lowercased()) has no delivery \(delivery.uuidString.lowercased()).")
        }
    }

    func check(_ url: String) async throws(ServiceError) {
        do {
            try await urlGuard.check(url)
        } catch {
            throw ServiceError(.unprocessable, code: "webhook_url_refused", detail: "The webhook URL cannot be used: \(error.reason).",
                               errors: [.init(field: "/url", message: error.reason, code: "webhook_url_refused")])
        }
    }

    static func events(_ names: [String], errors: inout [FieldError]) -> [WebhookEventType] {
        var events: [WebhookEventType] = []
        if names.isEmpty || names.count > 16 {
            errors.append(.init(field: "/events", message: "1 to 16 event types", code: "invalid_events"))
        }
        for (index, name) in names.enumerated() {
            if let event = WebhookEventType(rawValue: name) {
                if !events.contains(event) { events.append(event) }
            } else {
                errors.append(.init(field: "/events/\(index)", message: "one of " + WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "),
                                    code: "unknown_event"))
            }
        }
        return events
    }

    static func description(_ text: String?, errors: inout [FieldError]) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        errors += TextRules.check(trimmed, sent: text, at: "/description", lengths: 0...500)
        return trimmed
    }

    static func notFound(_ id: UUID) -> ServiceError {
        ServiceError(.notFound, code: "webhook_not_found", detail: "No webhook has the id \(id.uuidString.lowercased()).")
    }
}
