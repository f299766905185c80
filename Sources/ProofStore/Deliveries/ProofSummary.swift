import Foundation

/// The short form of a proof shown with its delivery.
public struct ProofSummary: Sendable, Equatable {
    /// Proof id.
    public var id: UUID
    /// Who signed.
    public var signerName: String
    /// Device time of the signature.
    public var capturedAt: Date
    /// Server time of the upload.
    public var receivedAt: Date
    /// Haversine distance to the destination, when both are known.
    public var distanceToDestinationMeters: Double?
    /// Flags such as `outside_geofence`.
    public var flags: [String]

    /// Creates a summary.
    public init(id: UUID, signerName: String, capturedAt: Date, receivedAt: Date, distanceToDestinationMeters: Double?, flags: [String]) {
        self.id = id
        self.signerName = signerName
        self.capturedAt = capturedAt
        self.receivedAt = receivedAt
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.flags = flags
    }
}
