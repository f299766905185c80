import Foundation
import ProofStore

/// What the server concludes about where and when a signature was captured: the distance to the
/// delivery's destination and the flags for a dispatcher or auditor, under the service's policy.
public struct CaptureAssessment: Sendable, Equatable {
    /// Metres from the capture location to the destination, when both are known.
    public var distanceToDestinationMeters: Double?
    /// The radius the distance was judged against.
    public var geofenceRadiusMeters: Double
    /// In the order the rules run: geofence, accuracy (or no location), clock.
    public var flags: [ProofFlag]

    /// Judges a capture at `location` (if the device gave one) and device time `capturedAt`,
    /// received at `receivedAt`, for a delivery going to `destination`.
    public init(location: CaptureLocation?, destination: GeoPoint?, capturedAt: Date, receivedAt: Date, policy: APIPolicy) {
        geofenceRadiusMeters = policy.geofenceRadiusMeters
        flags = []
        if let location {
            if let destination {
                let distance = location.point.distance(to: destination)
                distanceToDestinationMeters = distance
                if distance > policy.geofenceRadiusMeters { flags.append(.outsideGeofence) }
            }
            if let accuracy = location.accuracyMeters, accuracy > policy.geofenceRadiusMeters { flags.append(.poorLocationAccuracy) }
        } else {
            flags.append(.noLocation)
        }
        if capturedAt.timeIntervalSince(receivedAt) > policy.clockAheadTolerance { flags.append(.clockAhead) }
    }
}
