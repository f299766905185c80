/// A proof upload's body as the HTTP layer received it.
public struct ReceivedUpload: Sendable {
    /// The body exactly as received (stored byte for byte; gzip stays gzip).
    public var bytes: [UInt8]
    /// The JSON document: `bytes`, inflated when they were gzip.
    public var json: [UInt8]
    /// The request's `Content-Type`.
    public var contentType: String
    /// `gzip` when `bytes` are compressed.
    public var contentEncoding: String?
    /// SHA-256 of `bytes`.
    public var sha256: [UInt8]

    /// Creates the received body.
    public init(bytes: [UInt8], json: [UInt8], contentType: String, contentEncoding: String?, sha256: [UInt8]) {
        self.bytes = bytes
        self.json = json
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.sha256 = sha256
    }
}
