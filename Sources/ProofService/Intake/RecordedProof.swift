import Foundation
import ProofStore

/// A proof the intake stored: what the uploader is told.
public struct RecordedProof: Sendable, Equatable {
    public var id: UUID
    public var reference: String
    public var receivedAt: Date
    /// SHA-256 of the body as received.
    public var bodySHA256: [UInt8]
    public var pngSHA256: [UInt8]
    public var distanceToDestinationMeters: Double?
    public var flags: [ProofFlag]

    /// Creates the record.
    public init(id: UUID, reference: String, receivedAt: Date, bodySHA256: [UInt8], pngSHA256: [UInt8],
                distanceToDestinationMeters: Double?, flags: [ProofFlag]) {
        self.id = id
        self.reference = reference
        self.receivedAt = receivedAt
        self.bodySHA256 = bodySHA256
        self.pngSHA256 = pngSHA256
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.flags = flags
    }
}
