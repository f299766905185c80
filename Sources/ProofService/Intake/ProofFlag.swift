/// A fact about a proof's capture that a dispatcher or auditor should look at.
public enum ProofFlag: String, Sendable, Hashable, CaseIterable {
    case outsideGeofence = "outside_geofence"
    case poorLocationAccuracy = "poor_location_accuracy"
    case noLocation = "no_location"
    case clockAhead = "clock_ahead"
}
