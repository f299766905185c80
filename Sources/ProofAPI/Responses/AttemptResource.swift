import Foundation
import ProofService
import ProofStore

/// The JSON form of a failed delivery attempt (in a delivery, and the answer to recording one).
struct AttemptResource: Encodable {
    struct Location: Encodable {
        var lat: Double
        var lon: Double
        var accuracyM: Double?
        enum CodingKeys: String, CodingKey {
            case lat, lon
            case accuracyM = "accuracy_m"
        }
    }
    struct RecordedBy: Encodable {
        var name: String
        var role: String
    }

    var attempt: DeliveryAttempt
    /// The delivery it belongs to (in the answer to recording one; a delivery's list leaves it out).
    var reference: String?

    enum CodingKeys: String, CodingKey {
        case id, reference, outcome, reason, note, location, flags
        case capturedAt = "captured_at", receivedAt = "received_at", distance = "distance_to_destination_m", recordedBy = "recorded_by"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(attempt.id.uuidString.lowercased(), forKey: .id)
        try c.encodeIfPresent(reference, forKey: .reference)
        try c.encode("failed", forKey: .outcome)
        try c.encode(attempt.reason.rawValue, forKey: .reason)
        try c.encode(attempt.note, forKey: .note)
        try c.encode(attempt.capturedAtText, forKey: .capturedAt)
        try c.encode(RFC3339Timestamp.format(attempt.receivedAt), forKey: .receivedAt)
        try c.encode(attempt.location.map { Location(lat: $0.point.lat, lon: $0.point.lon, accuracyM: $0.accuracyMeters) }, forKey: .location)
        try c.encode(attempt.distanceToDestinationMeters.map(ProofLinks.roundMeters), forKey: .distance)
        try c.encode(attempt.flags, forKey: .flags)
        try c.encode(RecordedBy(name: attempt.recordedBy.name, role: attempt.recordedBy.role.rawValue), forKey: .recordedBy)
    }
}
