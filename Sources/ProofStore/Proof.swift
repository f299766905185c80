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

/// A proof ready to store: every field computed by the API (parsed, rendered, hashed).
public struct NewProof: Sendable {
    public var id: UUID
    public var signerName: String
    /// Device time of the signature.
    public var capturedAt: Date
    /// The device's UTC offset in minutes at capture time.
    public var capturedAtOffsetMinutes: Int
    /// `captured_at` exactly as sent.
    public var capturedAtText: String
    /// Server time of receipt.
    public var receivedAt: Date
    public var location: CaptureLocation?
    public var distanceToDestinationMeters: Double?
    public var geofenceRadiusMeters: Double
    public var flags: [String]
    public var device: DeviceFacts
    /// The request body exactly as received.
    public var body: [UInt8]
    public var bodyContentType: String
    /// `gzip` when the body was received compressed (and is stored so).
    public var bodyContentEncoding: String?
    public var bodySHA256: [UInt8]
    /// Which member carried the signature: `ink`, `signature_pad` or `inkml`.
    public var inkFormat: String
    /// Canonical `countersign.ink/v1` bytes of the parsed ink.
    public var ink: [UInt8]
    public var pointCount: Int
    public var strokeCount: Int
    public var png: [UInt8]
    public var pngSHA256: [UInt8]
    public var pngWidth: Int
    public var pngHeight: Int
    /// The render parameters, as JSON, so the PNG can be reproduced.
    public var renderOptionsJSON: String
    public var algorithmVersion: String
    public var uploadedBy: UUID
    public var idempotencyKey: String?

    /// Creates a proof to store.
    public init(id: UUID, signerName: String, capturedAt: Date, capturedAtOffsetMinutes: Int, capturedAtText: String,
                receivedAt: Date, location: CaptureLocation?, distanceToDestinationMeters: Double?, geofenceRadiusMeters: Double,
                flags: [String], device: DeviceFacts, body: [UInt8], bodyContentType: String, bodyContentEncoding: String?,
                bodySHA256: [UInt8], inkFormat: String, ink: [UInt8], pointCount: Int, strokeCount: Int, png: [UInt8],
                pngSHA256: [UInt8], pngWidth: Int, pngHeight: Int, renderOptionsJSON: String, algorithmVersion: String,
                uploadedBy: UUID, idempotencyKey: String?) {
        self.id = id
        self.signerName = signerName
        self.capturedAt = capturedAt
        self.capturedAtOffsetMinutes = capturedAtOffsetMinutes
        self.capturedAtText = capturedAtText
        self.receivedAt = receivedAt
        self.location = location
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.geofenceRadiusMeters = geofenceRadiusMeters
        self.flags = flags
        self.device = device
        self.body = body
        self.bodyContentType = bodyContentType
        self.bodyContentEncoding = bodyContentEncoding
        self.bodySHA256 = bodySHA256
        self.inkFormat = inkFormat
        self.ink = ink
        self.pointCount = pointCount
        self.strokeCount = strokeCount
        self.png = png
        self.pngSHA256 = pngSHA256
        self.pngWidth = pngWidth
        self.pngHeight = pngHeight
        self.renderOptionsJSON = renderOptionsJSON
        self.algorithmVersion = algorithmVersion
        self.uploadedBy = uploadedBy
        self.idempotencyKey = idempotencyKey
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
