import Foundation
import HTTPTypes
import Hummingbird
import ProofService
import ProofStore

/// `/v1/webhooks…`: admins register endpoints, change, pause, delete them, rotate their secrets,
/// send test events, list deliveries and queue one again. Every change is audited.
struct WebhookRoutes: Sendable {
    let webhooks: WebhookAdministration
    let policy: APIPolicy

    init(webhooks: WebhookAdministration, policy: APIPolicy) {
        self.webhooks = webhooks
        self.policy = policy
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("webhooks") { request, context in try await create(request, context) }
        group.get("webhooks") { _, context in try await list(context) }
        group.get("webhooks/:id") { _, context in try await show(context) }
        group.patch("webhooks/:id") { request, context in try await change(request, context) }
        group.delete("webhooks/:id") { request, context in try await delete(request, context) }
        group.post("webhooks/:id/rotate-secret") { request, context in try await rotate(request, context) }
        group.post("webhooks/:id/test") { request, context in try await test(request, context) }
        group.get("webhooks/:id/deliveries") { request, context in try await deliveries(request, context) }
        group.post("webhooks/:id/deliveries/:delivery/retry") { request, context in try await retry(request, context) }
    }

    func create(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: 16 * 1024)
        let registered = try await webhooks.register(body, origin: context.auditOrigin(request))
        return try JSONResponse.make(.created, WebhookResource(registered.endpoint, secret: registered.secret),
                                     headers: [.location: WebhookResource.path(registered.endpoint.id), .cacheControl: "no-store"])
    }

    func list(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        let endpoints = try await webhooks.list()
        return try JSONResponse.make(.ok, ListPage(items: endpoints.map { WebhookResource($0) }, nextCursor: nil, next: nil))
    }

    func show(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        return try JSONResponse.make(.ok, WebhookResource(try await webhooks.find(try id(context))))
    }

    func change(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        let id = try id(context)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: 16 * 1024)
        return try JSONResponse.make(.ok, WebhookResource(try await webhooks.change(id, body, origin: context.auditOrigin(request))))
    }

    func delete(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        try await webhooks.delete(try id(context), origin: context.auditOrigin(request))
        return Response(status: .noContent)
    }

    func rotate(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        let id = try id(context)
        // No body, or `{"force": true}` to rotate during another rotation's grace period.
        let body = try await RequestBodyReader.collect(request, limit: 1024)
        if !body.isEmpty { _ = try RequestBodyReader.requireJSON(request) }
        let rotated = try await webhooks.rotateSecret(id, body, origin: context.auditOrigin(request))
        return try JSONResponse.make(.ok, WebhookResource(rotated.endpoint, secret: rotated.secret), headers: [.cacheControl: "no-store"])
    }

    func test(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        try await webhooks.sendTest(try id(context), origin: context.auditOrigin(request))
        return Response(status: .accepted)
    }

    func deliveries(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        let id = try id(context)
        let parameters = request.uri.queryParameters
        var limit = 50
        if let raw = parameters[Substring("limit")] {
            guard let value = Int(String(raw)), (1...200).contains(value) else {
                throw Problem.validation("The parameters are not valid.", errors: [.init(field: "limit", message: "1 to 200", code: "invalid_limit")])
            }
            limit = value
        }
        var before: Date?
        if let raw = parameters[Substring("before")] {
            guard let parsed = try? RFC3339Timestamp(parsing: String(raw)) else {
                throw Problem.validation("The parameters are not valid.", errors: [.init(field: "before", message: "an RFC 3339 timestamp", code: "invalid_timestamp")])
            }
            before = parsed.date
        }
        let records = try await webhooks.deliveries(id, limit: limit, before: before)
        let cursor = records.count == limit ? records.last.map { RFC3339Timestamp.format($0.createdAt) } : nil
        let next = cursor.map { "\(WebhookResource.path(id))/deliveries?limit=\(limit)&before=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" }
        return try JSONResponse.make(.ok, ListPage(items: records.map(WebhookDeliveryResource.init), nextCursor: cursor, next: next))
    }

    func retry(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.manageWebhooks)
        let id = try id(context)
        guard let delivery = context.parameters.get("delivery").flatMap(UUID.init(uuidString:)) else {
            throw Problem(.notFound, code: "webhook_delivery_not_found", detail: "A webhook delivery id is a UUID.")
        }
        try await webhooks.retry(id, delivery: delivery, origin: context.auditOrigin(request))
        return Response(status: .accepted)
    }

    /// The endpoint id in the path; anything but a UUID names no endpoint (404).
    func id(_ context: AppRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw Problem(.notFound, code: "webhook_not_found", detail: "A webhook id is a UUID.")
        }
        return id
    }
}
