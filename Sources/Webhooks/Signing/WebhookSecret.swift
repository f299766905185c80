import Cryptography
import Foundation

/// A Standard Webhooks signing secret: `whsec_` and the base64 of 24 random bytes. Receivers
/// decode the part after the prefix and use the bytes as the HMAC key.
public struct WebhookSecret: Sendable, Equatable {
    /// The HMAC key.
    public let bytes: [UInt8]

    static let prefix = "whsec_"

    /// A new random secret.
    public static func generate() throws -> WebhookSecret {
        WebhookSecret(bytes: try AESGCM.randomBytes(24))
    }

    /// Wraps key bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads `whsec_<base64>`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
              !data.isEmpty else { return nil }
        bytes = Array(data)
    }

    /// The form shown once to the admin who made it.
    public var text: String { Self.prefix + Data(bytes).base64EncodedString() }
}
