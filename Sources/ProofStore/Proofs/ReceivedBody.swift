import Foundation

/// The upload's request body exactly as received, kept so the proof can be checked against it.
public struct ReceivedBody: Sendable {
    /// The bytes as received.
    public var bytes: [UInt8]
    /// Their content type.
    public var contentType: String
    /// `gzip` when the body was received compressed (and is stored so).
    public var contentEncoding: String?
    /// SHA-256 of ``bytes``.
    public var sha256: [UInt8]
    /// Server time of receipt.
    public var receivedAt: Date

    /// Creates a received body.
    public init(bytes: [UInt8], contentType: String, contentEncoding: String?, sha256: [UInt8], receivedAt: Date) {
        self.bytes = bytes
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.sha256 = sha256
        self.receivedAt = receivedAt
    }
}
