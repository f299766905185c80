import Foundation
import ProofService
import ProofStore

/// The JSON form of a delivery (`GET /v1/deliveries/{reference}` and listings).
struct DeliveryResource: Encodable {
    struct Recipient: Encodable { var name: String }
    struct Links: Encodable {
        var `self`: String
        var proof: String
    }

    var delivery: Delivery
    /// Whether `delivery.attempts` was loaded and is shown (a single delivery; listings leave it out).
    var includeAttempts = false

    enum CodingKeys: String, CodingKey {
        case id, reference, recipient, address, destination, status, proof, links, attempts
        case createdAt = "created_at", updatedAt = "updated_at", deliveredAt = "delivered_at"
        case closedAt = "closed_at", closeReason = "close_reason", erasedAt = "erased_at"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(delivery.id.uuidString.lowercased(), forKey: .id)
        try c.encode(delivery.reference, forKey: .reference)
        try c.encode(Recipient(name: delivery.recipientName), forKey: .recipient)
        try c.encode(delivery.address, forKey: .address)
        try c.encode(delivery.destination, forKey: .destination)
        try c.encode(delivery.status.rawValue, forKey: .status)
        try c.encode(RFC3339Timestamp.format(delivery.createdAt), forKey: .createdAt)
        try c.encode(RFC3339Timestamp.format(delivery.updatedAt), forKey: .updatedAt)
        try c.encode(delivery.deliveredAt.map(RFC3339Timestamp.format), forKey: .deliveredAt)
        try c.encode(delivery.proof.map { ProofSummaryResource(summary: $0, reference: delivery.reference) }, forKey: .proof)
        try c.encode(delivery.closure.map { RFC3339Timestamp.format($0.closedAt) }, forKey: .closedAt)
        try c.encode(delivery.closure?.reason, forKey: .closeReason)
        // Only on an erased delivery (migration 0026), whose personal texts then read as empty.
        try c.encodeIfPresent(delivery.erasedAt.map(RFC3339Timestamp.format), forKey: .erasedAt)
        if includeAttempts { try c.encode(delivery.attempts.map { AttemptResource(attempt: $0) }, forKey: .attempts) }
        let base = DeliveryResource.path(delivery.reference)
        try c.encode(Links(self: base, proof: base + "/proof"), forKey: .links)
    }

    /// `/v1/deliveries/{reference}`.
    static func path(_ reference: String) -> String { ProofLinks.deliveryPath(reference) }
}

/// The proof summary inside a delivery.
struct ProofSummaryResource: Encodable {
    var summary: ProofSummary
    var reference: String

    enum CodingKeys: String, CodingKey {
        case signer, flags, links
        case proofID = "proof_id", capturedAt = "captured_at", receivedAt = "received_at"
        case distance = "distance_to_destination_m"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(summary.id.uuidString.lowercased(), forKey: .proofID)
        try c.encode(["name": summary.signerName], forKey: .signer)
        try c.encode(RFC3339Timestamp.format(summary.capturedAt), forKey: .capturedAt)
        try c.encode(RFC3339Timestamp.format(summary.receivedAt), forKey: .receivedAt)
        try c.encode(summary.distanceToDestinationMeters.map(ProofLinks.roundMeters), forKey: .distance)
        try c.encode(summary.flags, forKey: .flags)
        try c.encode(ProofLinks(reference: reference), forKey: .links)
    }
}
