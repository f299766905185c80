import Foundation
import ProofStore

/// A parsed and validated `POST /v1/deliveries/{reference}/attempts` body: a courier's report of
/// a failed attempt. Strict like every other body (duplicate members and control characters 422).
public struct AttemptReport: Sendable, Equatable {
    public var reason: AttemptReason
    /// Trimmed; `nil` when none (or only white space) was sent.
    public var note: String?
    public var capturedAt: RFC3339Timestamp
    public var location: CaptureLocation?

    /// The longest note, in code points.
    public static let maxNoteLength = 1_000

    struct Body: Decodable {
        struct Location: Decodable {
            var lat: Double?
            var lon: Double?
            var accuracyM: Double?
            enum CodingKeys: String, CodingKey {
                case lat, lon
                case accuracyM = "accuracy_m"
            }
        }
        var outcome: String?
        var reason: String?
        var note: String?
        var capturedAt: String?
        var location: Location?
        enum CodingKeys: String, CodingKey {
            case outcome, reason, note, location
            case capturedAt = "captured_at"
        }
    }

    /// Parses `body`; every refusal is a 400 (not JSON) or 422 (with field errors) ``ServiceError``.
    public static func parse(_ body: [UInt8]) throws(ServiceError) -> AttemptReport {
        let input = try JSONEnvelopeDecoder.decode(Body.self, from: body)
        var errors: [FieldError] = []
        switch input.outcome {
        case nil: errors.append(.init(field: "/outcome", message: "required", code: "missing_field"))
        case "failed": break
        default: errors.append(.init(field: "/outcome", message: "failed (a success is recorded as a proof)", code: "invalid_value"))
        }
        var reason: AttemptReason?
        if let given = input.reason {
            reason = AttemptReason(rawValue: given)
            if reason == nil {
                errors.append(.init(field: "/reason", message: AttemptReason.allCases.map(\.rawValue).joined(separator: ", "),
                                    code: "invalid_value"))
            }
        } else {
            errors.append(.init(field: "/reason", message: "required", code: "missing_field"))
        }
        var note: String?
        if let sent = input.note {
            let trimmed = sent.trimmingCharacters(in: .whitespacesAndNewlines)
            errors += TextRules.check(trimmed, sent: sent, at: "/note", lengths: 0...maxNoteLength)
            note = trimmed.isEmpty ? nil : trimmed
        }
        let capturedAt = CaptureRules.capturedAt(input.capturedAt, errors: &errors)
        var location: CaptureLocation?
        if let given = input.location {
            location = CaptureRules.location(lat: given.lat, lon: given.lon, accuracyM: given.accuracyM, errors: &errors)
        }
        guard errors.isEmpty, let reason, let capturedAt else { throw .validation("The attempt is not valid.", errors: errors) }
        return AttemptReport(reason: reason, note: note, capturedAt: capturedAt, location: location)
    }
}
