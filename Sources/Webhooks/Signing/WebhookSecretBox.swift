import Cryptography
import Foundation

/// Seals signing secrets for storage and opens them to sign: AES-256-GCM under the key of
/// `WEBHOOK_SECRETS_KEY`, with the endpoint's id as associated data, so a sealed secret copied to
/// another endpoint's row does not open. The database alone (a dump, a replica, a backup) never
/// holds a usable secret; see docs/decisions/0025-webhook-outbox.md.
public struct WebhookSecretBox: Sendable {
    let key: [UInt8]

    /// A failure to seal or open a secret.
    public enum Failure: Error, Sendable, Equatable {
        /// `WEBHOOK_SECRETS_KEY` is not 32 bytes of base64 (or hex).
        case invalidKey
        /// The stored secret does not open with this key (another key, or altered).
        case unreadable(String)
    }

    /// A box over a 32-byte key.
    public init(key: [UInt8]) throws(Failure) {
        guard key.count == AESGCM.keyByteCount else { throw .invalidKey }
        self.key = key
    }

    /// A box over a key written as base64 (44 characters) or hex (64).
    public init(encodedKey: String) throws(Failure) {
        let trimmed = encodedKey.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.count == 64, let bytes = Hex.decode(trimmed) {
            try self.init(key: bytes)
        } else if let data = Data(base64Encoded: trimmed) {
            try self.init(key: Array(data))
        } else {
            throw .invalidKey
        }
    }

    /// `secret` sealed for endpoint `endpointID`.
    public func seal(_ secret: WebhookSecret, for endpointID: UUID) throws -> [UInt8] {
        try AESGCM.seal(secret.bytes, key: key, associatedData: Self.binding(endpointID))
    }

    /// The secret sealed for `endpointID`.
    public func open(_ sealed: [UInt8], for endpointID: UUID) throws(Failure) -> WebhookSecret {
        do {
            return WebhookSecret(bytes: try AESGCM.open(sealed, key: key, associatedData: Self.binding(endpointID)))
        } catch {
            throw .unreadable(error.description)
        }
    }

    static func binding(_ endpointID: UUID) -> [UInt8] { Array("countersign-webhook:\(endpointID.uuidString.lowercased())".utf8) }
}
