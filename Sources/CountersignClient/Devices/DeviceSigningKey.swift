#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation

/// The device's Ed25519 key (docs/courier-guide.md §7): made once on the device, its public half
/// registered with `POST /v1/devices` (``CourierClient/registerDevice(_:label:)``), and, once an
/// admin or dispatcher approved it, used to sign every upload (``PreparedProof/signed(by:)``).
///
/// The private key never leaves the device: keep ``rawRepresentation`` in the Keychain
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, not synchronised) and rebuild the key
/// with ``init(rawRepresentation:keyID:)``. CryptoKit on Apple platforms, swift-crypto elsewhere (same API).
public struct DeviceSigningKey: Sendable {
    let key: Curve25519.Signing.PrivateKey
    /// The id the server gave the registration (`Countersign-Device-Key`); `nil` until registered.
    public var keyID: String?

    /// A new random key pair.
    public static func generate() -> DeviceSigningKey {
        DeviceSigningKey(key: Curve25519.Signing.PrivateKey(), keyID: nil)
    }

    /// A key from its stored 32-byte seed and, once registered, its id.
    public init(rawRepresentation: Data, keyID: String? = nil) throws(CountersignClientError) {
        do { key = try Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation) } catch {
            throw .encoding("a device key is 32 bytes: \(error)")
        }
        self.keyID = keyID
    }

    init(key: Curve25519.Signing.PrivateKey, keyID: String?) {
        self.key = key
        self.keyID = keyID
    }

    /// The 32-byte seed: what the device stores (in its secure storage) to use the key again.
    public var rawRepresentation: Data { key.rawRepresentation }

    /// The 32 raw public key bytes in base64: the `public_key` of the registration.
    public var publicKeyBase64: String { key.publicKey.rawRepresentation.base64EncodedString() }

    /// The signature headers of an upload of `body` to `reference` (docs/api.md, "Device
    /// signatures"). The key must be registered (have a ``keyID``).
    public func uploadHeaders(reference: String, body: Data) throws(CountersignClientError) -> (keyID: String, signature: String) {
        guard let keyID, let id = UUID(uuidString: keyID) else { throw .encoding("the device key is not registered yet (no key id)") }
        let message = DeviceUploadMessage.bytes(reference: reference, keyID: id, bodySHA256: Array(SHA256.hash(data: body)))
        do {
            return (id.uuidString.lowercased(), try key.signature(for: Data(message)).base64EncodedString())
        } catch {
            throw .encoding("signing the upload failed: \(error)")
        }
    }
}
