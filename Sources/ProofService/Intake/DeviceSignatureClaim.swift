import Foundation

/// What an upload says about its device signature: the raw values of the
/// `Countersign-Device-Key` and `Countersign-Device-Signature` headers, not yet trusted.
public struct DeviceSignatureClaim: Sendable, Equatable {
    /// The key id header (a UUID, if well formed), `nil` when absent.
    public var keyID: String?
    /// The signature header (64 bytes in base64, if well formed), `nil` when absent.
    public var signature: String?

    /// Creates a claim from the two header values.
    public init(keyID: String?, signature: String?) {
        self.keyID = keyID
        self.signature = signature
    }

    /// Neither header was sent.
    public var isEmpty: Bool { keyID == nil && signature == nil }
}
