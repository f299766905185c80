import Foundation
import HTTPTypes
import Hummingbird
import ProofService
import ProofStore

/// Erasure and legal holds (migration 0026): `POST /v1/deliveries/{reference}/erase` (admin),
/// `GET`, `PUT` and `DELETE /v1/deliveries/{reference}/legal-hold` (auditor, admin). HTTP in and
/// out; the work is ``DeliveryErasure``'s.
struct DeliveryErasureRoutes: Sendable {
    let erasure: DeliveryErasure

    /// A reason is a few dozen bytes.
    static let bodyLimit = 16 * 1024

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries/:reference/erase") { request, context in try await erase(request, context) }
        group.get("deliveries/:reference/legal-hold") { request, context in try await readHold(request, context) }
        group.put("deliveries/:reference/legal-hold") { request, context in try await setHold(request, context) }
        group.delete("deliveries/:reference/legal-hold") { request, context in try await clearHold(request, context) }
    }

    /// 200 with the erased delivery (`erased_at` set, its personal texts empty); asked again, the
    /// same delivery with `already_erased: true`. 409 `delivery_pending` or `legal_hold`.
    func erase(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.eraseDelivery)
        let reference = try context.deliveryReference()
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: Self.bodyLimit)
        let result = try await erasure.erase(reference, body: body, by: actor, origin: context.auditOrigin(request))
        return try JSONResponse.make(.ok, ErasureResource(delivery: DeliveryResource(delivery: result.delivery, includeAttempts: true),
                                                          alreadyErased: result.alreadyErased))
    }

    /// 200 with the hold, or 404 `no_legal_hold`.
    func readHold(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.holdDelivery)
        let reference = try context.deliveryReference()
        guard let hold = try await erasure.currentHold(reference) else {
            throw Problem(.notFound, code: "no_legal_hold", detail: "Delivery \(reference) is not under a legal hold.")
        }
        return try JSONResponse.make(.ok, LegalHoldResource(reference: reference, hold: hold, alreadyHeld: nil))
    }

    /// 200 with the hold that stands (`already_held` when it stood before this request); 409
    /// `delivery_erased`.
    func setHold(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.holdDelivery)
        let reference = try context.deliveryReference()
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: Self.bodyLimit)
        let result = try await erasure.hold(reference, body: body, by: actor, origin: context.auditOrigin(request))
        return try JSONResponse.make(.ok, LegalHoldResource(reference: reference, hold: result.hold, alreadyHeld: result.alreadyHeld))
    }

    /// 204 whether or not there was a hold (the event is written only when one was cleared).
    func clearHold(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.holdDelivery)
        let reference = try context.deliveryReference()
        _ = try await erasure.clearHold(reference, by: actor, origin: context.auditOrigin(request))
        return Response(status: .noContent)
    }
}

/// The answer to an erasure request.
struct ErasureResource: Encodable {
    var delivery: DeliveryResource
    var alreadyErased: Bool

    enum CodingKeys: String, CodingKey {
        case delivery
        case alreadyErased = "already_erased"
    }
}

/// A delivery's legal hold.
struct LegalHoldResource: Encodable {
    var reference: String
    var hold: LegalHold
    var alreadyHeld: Bool?

    enum CodingKeys: String, CodingKey {
        case reference, reason
        case heldBy = "held_by", heldAt = "held_at", alreadyHeld = "already_held"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(reference, forKey: .reference)
        try c.encode(hold.reason, forKey: .reason)
        try c.encode(hold.heldBy.uuidString.lowercased(), forKey: .heldBy)
        try c.encode(RFC3339Timestamp.format(hold.heldAt), forKey: .heldAt)
        try c.encodeIfPresent(alreadyHeld, forKey: .alreadyHeld)
    }
}
