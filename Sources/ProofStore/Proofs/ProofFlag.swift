/// Something about a proof a reviewer should know, stored in `proofs.flags` by its raw value.
public enum ProofFlag: String, Sendable, Hashable, CaseIterable {
    /// The signature was captured farther from the destination than the geofence radius.
    case outsideGeofence = "outside_geofence"
    /// The reported location accuracy is coarser than the geofence radius.
    case poorLocationAccuracy = "poor_location_accuracy"
    /// The device sent no location.
    case noLocation = "no_location"
    /// The device clock was ahead of the server's by more than the tolerance.
    case clockAhead = "clock_ahead"
}
