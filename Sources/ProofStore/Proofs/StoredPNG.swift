/// A stored PNG (or only its hash when the caller's copy is current).
public struct StoredPNG: Sendable, Equatable {
    /// SHA-256 of the PNG.
    public var sha256: [UInt8]
    /// The PNG, `nil` when the caller's ETag matched.
    public var bytes: [UInt8]?
}
