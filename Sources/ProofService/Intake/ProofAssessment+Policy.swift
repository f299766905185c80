import Foundation
import ProofStore

extension ProofAssessment {
    /// What the server concludes about where and when a signature was captured, under `policy`: a
    /// capture at `location` (if the device gave one) and device time `capturedAt`, received at
    /// `receivedAt`, for a delivery going to `destination`. Flags come in the order the rules run:
    /// geofence, accuracy (or no location), clock.
    public init(location: CaptureLocation?, destination: GeoPoint?, capturedAt: Date, receivedAt: Date, policy: APIPolicy) {
        var distance: Double?
        var flags: [ProofFlag] = []
        if let location {
            if let destination {
                distance = location.point.distance(to: destination)
                if distance! > policy.geofenceRadiusMeters { flags.append(.outsideGeofence) }
            }
            if let accuracy = location.accuracyMeters, accuracy > policy.geofenceRadiusMeters { flags.append(.poorLocationAccuracy) }
        } else {
            flags.append(.noLocation)
        }
        if capturedAt.timeIntervalSince(receivedAt) > policy.clockAheadTolerance { flags.append(.clockAhead) }
        self.init(distanceToDestinationMeters: distance, geofenceRadiusMeters: policy.geofenceRadiusMeters, flags: flags)
    }
}
