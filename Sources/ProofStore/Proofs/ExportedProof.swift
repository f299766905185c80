import Foundation

/// Everything an export carries for one proof: its delivery, its metadata and its stored bytes.
public struct ExportedProof: Sendable {
    /// The proof's metadata (as `GET …/proof` shows it).
    public var metadata: ProofMetadata
    /// The delivery's recipient name.
    public var recipientName: String
    /// The delivery's address.
    public var address: String
    /// The delivery's destination, when it has one.
    public var destination: GeoPoint?
    /// The original request body, byte for byte as received (gzip-compressed when it arrived so).
    public var body: [UInt8]
    /// The canonical `countersign.ink/v1` bytes the PNG was rendered from.
    public var ink: [UInt8]
    /// The stored PNG.
    public var png: [UInt8]
}
