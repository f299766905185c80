import Cryptography
import Foundation
import Postgres

/// Everything a stored attempt says: its delivery, why it failed, the note, when and where, what
/// the server concluded and who recorded it. Its ``digest`` is bound into the attempt's
/// `delivery_attempt_recorded` event as `attempt_sha256`, and the verifier derives it again from
/// the row, so editing an attempt (or moving it to another delivery) is found. The encoding is in
/// docs/audit.md ("Attempt facts").
public struct AttemptFacts: Sendable, Equatable {
    /// The tag that starts the encoding.
    public static let tag = "countersign.attempt-facts/v1"

    public var attemptID: UUID
    /// The reference of the delivery the attempt belongs to (through `delivery_attempts.delivery_id`).
    public var reference: String
    public var outcome: String
    public var reason: String
    public var note: String?
    /// `captured_at`, microseconds since the Unix epoch, as stored.
    public var capturedAtMicros: Int64
    public var capturedAtOffsetMinutes: Int32
    public var capturedAtText: String
    /// `received_at`, microseconds since the Unix epoch, as stored.
    public var receivedAtMicros: Int64
    public var locationLat: Double?
    public var locationLon: Double?
    public var locationAccuracyMeters: Double?
    public var distanceToDestinationMeters: Double?
    public var geofenceRadiusMeters: Double
    /// In stored order.
    public var flags: [String]
    public var recordedBy: UUID

    /// The facts of `attempt`, about to be stored for the delivery `reference`.
    public init(_ attempt: NewAttempt, reference: String) {
        attemptID = attempt.id
        self.reference = reference
        outcome = "failed"
        reason = attempt.reason.rawValue
        note = attempt.note
        capturedAtMicros = PostgresEpoch.unixMicros(attempt.capturedAt.date)
        capturedAtOffsetMinutes = Int32(attempt.capturedAt.offsetMinutes)
        capturedAtText = attempt.capturedAt.text
        receivedAtMicros = PostgresEpoch.unixMicros(attempt.receivedAt)
        locationLat = attempt.location?.point.lat
        locationLon = attempt.location?.point.lon
        locationAccuracyMeters = attempt.location?.accuracyMeters
        distanceToDestinationMeters = attempt.assessment.distanceToDestinationMeters
        geofenceRadiusMeters = attempt.assessment.geofenceRadiusMeters
        flags = attempt.assessment.flags.map(\.rawValue)
        recordedBy = attempt.recordedBy
    }

    /// The facts as read back from a stored row (``AttemptFacts/columns``).
    init(row: PostgresRow) throws {
        attemptID = try row.decode("id")
        reference = try row.decode("reference")
        outcome = try row.decode("outcome")
        reason = try row.decode("reason")
        note = try row.decode("note")
        capturedAtMicros = try row.decode("captured_at_us")
        capturedAtOffsetMinutes = try row.decode("captured_at_offset_min")
        capturedAtText = try row.decode("captured_at_text")
        receivedAtMicros = try row.decode("received_at_us")
        locationLat = try row.decode("location_lat")
        locationLon = try row.decode("location_lon")
        locationAccuracyMeters = try row.decode("location_accuracy_m")
        distanceToDestinationMeters = try row.decode("distance_to_destination_m")
        geofenceRadiusMeters = try row.decode("geofence_radius_m")
        flags = (try row.decode(String.self, "flags_text")).split(separator: ",").map(String.init)
        recordedBy = try row.decode("recorded_by")
    }

    /// The select list that ``init(row:)`` reads, for a query over `delivery_attempts a JOIN deliveries d`.
    static let columns = """
        a.id, d.reference::text AS reference, a.outcome::text AS outcome, a.reason::text AS reason, a.note::text AS note,
        (extract(epoch FROM a.captured_at) * 1000000)::int8 AS captured_at_us, a.captured_at_offset_min::int4 AS captured_at_offset_min,
        a.captured_at_text::text AS captured_at_text, (extract(epoch FROM a.received_at) * 1000000)::int8 AS received_at_us,
        a.location_lat::float8 AS location_lat, a.location_lon::float8 AS location_lon,
        a.location_accuracy_m::float8 AS location_accuracy_m, a.distance_to_destination_m::float8 AS distance_to_destination_m,
        a.geofence_radius_m::float8 AS geofence_radius_m, array_to_string(a.flags, ',') AS flags_text, a.recorded_by
        """

    /// SHA-256 of the encoding in docs/audit.md ("Attempt facts").
    public var digest: [UInt8] {
        var out = CanonicalEncoder()
        out.text(Self.tag)
        out.text(attemptID.uuidString.lowercased())
        out.text(reference)
        out.text(outcome)
        out.text(reason)
        out.text(note)
        out.int64(capturedAtMicros)
        out.int32(capturedAtOffsetMinutes)
        out.text(capturedAtText)
        out.int64(receivedAtMicros)
        out.number(locationLat)
        out.number(locationLon)
        out.number(locationAccuracyMeters)
        out.number(distanceToDestinationMeters)
        out.number(geofenceRadiusMeters)
        out.text(flags.joined(separator: ","))
        out.text(recordedBy.uuidString.lowercased())
        return SHA256.hash(out.bytes)
    }
}
