import Foundation
import ProofStore

/// Creating a delivery: the body is validated here, the repository stores it (and audits it) or
/// finds the same delivery already there.
public struct DeliveryRegistration: Sendable {
    let deliveries: DeliveryRepository

    /// Creates the use case over `deliveries`.
    public init(deliveries: DeliveryRepository) {
        self.deliveries = deliveries
    }

    /// The body of `POST /v1/deliveries`.
    struct Body: Decodable {
        struct Recipient: Decodable { var name: String? }
        struct Destination: Decodable {
            var lat: Double?
            var lon: Double?
        }
        var reference: String?
        var recipient: Recipient?
        var address: String?
        var destination: Destination?
    }

    /// Registers the delivery `body` describes: `.created`, or `.existing` for a repeat of the same
    /// delivery; a different delivery under a used reference is a 409 `reference_conflict`.
    public func register(_ body: [UInt8], by actor: Actor, origin: AuditOrigin) async throws -> DeliveryCreation {
        let draft = try Self.validate(JSONEnvelopeDecoder.decode(Body.self, from: body))
        let outcome = try await deliveries.create(draft, by: actor, origin: origin)
        if case .conflict(let delivery) = outcome {
            throw ServiceError(.conflict, code: "reference_conflict",
                               detail: "Delivery \(delivery.reference) already exists with different content.",
                               errors: [.init(field: "/reference", message: "already used by another delivery", code: "reference_conflict")])
        }
        return outcome
    }

    static func validate(_ input: Body) throws(ServiceError) -> NewDelivery {
        var errors: [FieldError] = []
        let reference = input.reference ?? ""
        if input.reference == nil {
            errors.append(.init(field: "/reference", message: "required", code: "missing_field"))
        } else if !DeliveryRules.isValidReference(reference) {
            errors.append(.init(field: "/reference", message: "1 to 64 characters: letters, digits and . _ : - (starting with a letter or digit)",
                                code: "invalid_reference"))
        }
        let name = input.recipient?.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if input.recipient?.name == nil {
            errors.append(.init(field: "/recipient/name", message: "required", code: "missing_field"))
        } else {
            errors += TextRules.check(name, sent: input.recipient?.name, at: "/recipient/name", lengths: 1...200)
        }
        let address = input.address?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if input.address == nil {
            errors.append(.init(field: "/address", message: "required", code: "missing_field"))
        } else {
            errors += TextRules.check(address, sent: input.address, at: "/address", lengths: 1...500)
        }
        var destination: GeoPoint?
        if let given = input.destination {
            errors += DeliveryRules.validateCoordinates(lat: given.lat, lon: given.lon, at: "/destination")
            if let lat = given.lat, let lon = given.lon, errors.isEmpty { destination = GeoPoint(lat: lat, lon: lon) }
        }
        guard errors.isEmpty else { throw .validation("The delivery is not valid.", errors: errors) }
        return NewDelivery(reference: reference, recipientName: name, address: address, destination: destination)
    }
}
