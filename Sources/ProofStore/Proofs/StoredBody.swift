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
