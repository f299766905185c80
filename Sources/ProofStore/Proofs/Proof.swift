import Foundation

/// Facts about the device that captured a signature (all optional, as reported by the app).
public struct DeviceFacts: Sendable, Equatable, Codable {
    public var id: String?
    public var model: String?
    public var os: String?
    public var app: String?

    /// Creates device facts.
    public init(id: String? = nil, model: String? = nil, os: String? = nil, app: String? = nil) {
        self.id = id
        self.model = model
        self.os = os
        self.app = app
    }
}

/// Where the device was when the signature was captured.
public struct CaptureLocation: Sendable, Equatable {
    /// The position.
    public var point: GeoPoint
    /// Reported horizontal accuracy (metres), if any.
    public var accuracyMeters: Double?

    /// Creates a location.
    public init(point: GeoPoint, accuracyMeters: Double?) {
        self.point = point
        self.accuracyMeters = accuracyMeters
    }
}

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

/// The original request body of a proof.
public struct StoredBody: Sendable, Equatable {
    /// The bytes as received.
    public var bytes: [UInt8]
    /// Their content type.
    public var contentType: String
    /// `gzip` when received (and stored) compressed.
    public var contentEncoding: String?
    /// Their SHA-256.
    public var sha256: [UInt8]
}

/// A stored PNG (or only its hash when the caller's copy is current).
public struct StoredPNG: Sendable, Equatable {
    /// SHA-256 of the PNG.
    public var sha256: [UInt8]
    /// The PNG, `nil` when the caller's ETag matched.
    public var bytes: [UInt8]?
}

/// Canonical ink and its render parameters.
public struct StoredInk: Sendable, Equatable {
    /// `countersign.ink/v1` bytes.
    public var ink: [UInt8]
    /// The render options used for the stored PNG (JSON).
    public var renderOptionsJSON: String
}
