import Foundation

/// A stored proof's metadata (no large columns).
public struct ProofMetadata: Sendable, Equatable {
    public var id: UUID
    public var deliveryReference: String
    public var signerName: String
    public var capturedAt: Date
    public var capturedAtOffsetMinutes: Int
    public var capturedAtText: String
    public var receivedAt: Date
    public var location: CaptureLocation?
    public var distanceToDestinationMeters: Double?
    public var geofenceRadiusMeters: Double
    public var flags: [String]
    public var device: DeviceFacts
    public var bodyContentType: String
    public var bodyContentEncoding: String?
    public var bodySize: Int
    public var bodySHA256: [UInt8]
    public var inkFormat: String
    public var pointCount: Int
    public var strokeCount: Int
    public var pngSHA256: [UInt8]
    public var pngWidth: Int
    public var pngHeight: Int
    public var renderOptionsJSON: String
    public var algorithmVersion: String
    /// The key that uploaded it.
    public var uploadedBy: Actor
}
