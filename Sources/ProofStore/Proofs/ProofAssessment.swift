/// What the server concluded about a capture against the delivery and its policy.
public struct ProofAssessment: Sendable {
    /// Distance from the capture location to the delivery's destination, when both are known.
    public var distanceToDestinationMeters: Double?
    /// The geofence radius the capture was judged against.
    public var geofenceRadiusMeters: Double
    /// What a reviewer should know, in the order found.
    public var flags: [ProofFlag]

    /// Creates an assessment.
    public init(distanceToDestinationMeters: Double?, geofenceRadiusMeters: Double, flags: [ProofFlag]) {
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.geofenceRadiusMeters = geofenceRadiusMeters
        self.flags = flags
    }
}
