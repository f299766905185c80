import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import ProofService
import ProofStore

/// A delivery's life besides its proof: `POST /v1/deliveries/{reference}/attempts` (a failed
/// attempt), `POST .../cancel` and `POST .../fail` (end it without a proof). HTTP in and out; the
/// work is ``AttemptRecording``'s and ``DeliveryClosing``'s.
struct DeliveryLifecycleRoutes: Sendable {
    let attempts: AttemptRecording
    let closing: DeliveryClosing
    let idempotency: IdempotencyGate

    /// An attempt is a few hundred bytes; a reason a few dozen.
    static let bodyLimit = 16 * 1024

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries/:reference/attempts") { request, context in try await recordAttempt(request, context) }
        group.post("deliveries/:reference/cancel") { request, context in try await close(request, context, as: .cancelled) }
        group.post("deliveries/:reference/fail") { request, context in try await close(request, context, as: .failed) }
    }

    /// 201 with the stored attempt; an Idempotency-Key makes a retry safe (same key and body: the
    /// same answer, marked `Idempotent-Replayed`).
    func recordAttempt(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.recordAttempt)
        let reference = try context.deliveryReference()
        let receivedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: Self.bodyLimit)
        let claimedKey: String?
        switch try await idempotency.admit(request, actor: actor, encoding: nil, bodySHA256: SHA256.hash(body)) {
        case .replay(let response): return response
        case .proceed(let key): claimedKey = key
        }
        defer { if let claimedKey { idempotency.finished(claimedKey, actor: actor) } }
        let location = DeliveryResource.path(reference)
        do {
            let answer = try await attempts.record(body, reference: reference, actor: actor, receivedAt: receivedAt,
                                                   origin: context.auditOrigin(request), idempotencyKey: claimedKey) { attempt in
                IdempotentResponse(status: 201, contentType: "application/json", location: location,
                                   body: try JSONResponse.encode(AttemptResource(attempt: attempt, reference: reference)))
            }
            return JSONResponse.make(.created, bytes: answer.body, headers: [.location: location])
        } catch {
            if let claimedKey { await idempotency.release(claimedKey, actor: actor, logger: context.logger) }
            throw error
        }
    }

    /// 200 with the closed delivery (and its attempts); 409 `invalid_transition` unless it was pending.
    func close(_ request: Request, _ context: AppRequestContext, as status: DeliveryStatus) async throws -> Response {
        let actor = try context.require(.closeDelivery)
        let reference = try context.deliveryReference()
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: Self.bodyLimit)
        let closedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
        let delivery = try await closing.close(reference, as: status, body: body, by: actor, at: closedAt,
                                               origin: context.auditOrigin(request))
        return try JSONResponse.make(.ok, DeliveryResource(delivery: delivery, includeAttempts: true))
    }
}
