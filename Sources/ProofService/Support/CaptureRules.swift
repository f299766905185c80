import ProofStore

/// The rules for when and where a device says something happened, shared by a proof's envelope
/// and a delivery attempt: `captured_at` is RFC 3339 with its UTC offset, and a location has a
/// latitude and longitude (and, optionally, a non-negative accuracy in metres).
public enum CaptureRules {
    /// The `captured_at` member `text` (at `/captured_at`), or `nil` with its field error added to `errors`.
    public static func capturedAt(_ text: String?, errors: inout [FieldError]) -> RFC3339Timestamp? {
        guard let text else {
            errors.append(.init(field: "/captured_at", message: "required", code: "missing_field"))
            return nil
        }
        do {
            return try RFC3339Timestamp(parsing: text)
        } catch .missingOffset {
            errors.append(.init(field: "/captured_at", message: "the timestamp must carry its UTC offset (Z or ±hh:mm)",
                                code: "missing_offset"))
        } catch {
            errors.append(.init(field: "/captured_at", message: "an RFC 3339 timestamp with offset, e.g. 2025-03-01T14:05:09+01:00",
                                code: "invalid_timestamp"))
        }
        return nil
    }

    /// The location at `/location` from its members, or `nil` with its field errors added to `errors`.
    public static func location(lat: Double?, lon: Double?, accuracyM: Double?, errors: inout [FieldError]) -> CaptureLocation? {
        let before = errors.count
        errors += DeliveryRules.validateCoordinates(lat: lat, lon: lon, at: "/location")
        if let accuracyM, !(accuracyM.isFinite && accuracyM >= 0 && accuracyM <= 1_000_000) {
            errors.append(.init(field: "/location/accuracy_m", message: "metres, 0 or more", code: "out_of_range"))
        }
        guard errors.count == before, let lat, let lon else { return nil }
        return CaptureLocation(point: GeoPoint(lat: lat, lon: lon), accuracyMeters: accuracyM)
    }
}
