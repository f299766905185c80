import Foundation

/// The device signature an upload came with, once verified: which registered key signed, and the
/// 64 signature bytes, stored with the proof and bound into its `proof_recorded` event.
public struct DeviceSignature: Sendable, Equatable {
    /// The registered key's id.
    public var keyID: UUID
    /// The Ed25519 signature of ``DeviceUploadMessage`` (64 bytes).
    public var signature: [UInt8]

    /// Creates a signature record.
    public init(keyID: UUID, signature: [UInt8]) {
        self.keyID = keyID
        self.signature = signature
    }
}
