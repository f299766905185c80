import Foundation

/// A stored failed attempt, as a delivery shows it.
public struct DeliveryAttempt: Sendable, Equatable {
    public var id: UUID
    public var reason: AttemptReason
    public var note: String?
    /// Device time of the attempt.
    public var capturedAt: Date
    /// `captured_at` exactly as the device sent it (with its offset).
    public var capturedAtText: String
    /// Server time of the request.
    public var receivedAt: Date
    public var location: CaptureLocation?
    /// Haversine distance to the destination, when both are known.
    public var distanceToDestinationMeters: Double?
    /// Flags such as `outside_geofence`, as for a proof.
    public var flags: [String]
    /// The key that recorded it.
    public var recordedBy: Actor

    /// Creates an attempt value.
    public init(id: UUID, reason: AttemptReason, note: String?, capturedAt: Date, capturedAtText: String, receivedAt: Date,
                location: CaptureLocation?, distanceToDestinationMeters: Double?, flags: [String], recordedBy: Actor) {
        self.id = id
        self.reason = reason
        self.note = note
        self.capturedAt = capturedAt
        self.capturedAtText = capturedAtText
        self.receivedAt = receivedAt
        self.location = location
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.flags = flags
        self.recordedBy = recordedBy
    }
}
