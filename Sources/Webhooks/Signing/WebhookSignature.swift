import Cryptography
import Foundation

/// Standard Webhooks signatures: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
/// Several secrets (a rotation's grace period) give several signatures, space-separated, in
/// one `webhook-signature` header; a receiver accepts the message if any one verifies.
public enum WebhookSignature {
    /// The content that is signed.
    static func signedContent(id: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        Array("\(id).\(timestamp).".utf8) + body
    }

    /// The `webhook-signature` header value for `body` under every one of `secrets`, newest first.
    public static func header(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) throws -> String {
        let content = signedContent(id: id, timestamp: timestamp, body: body)
        return try secrets.map { secret in
            "v1," + Data(try HMACSHA256.authenticationCode(for: content, key: secret.bytes)).base64EncodedString()
        }.joined(separator: " ")
    }

    /// Whether `header` holds a valid `v1` signature of the message under `secret` (for tests and
    /// for anyone checking our own output).
    public static func verify(header: String, id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) throws -> Bool {
        let expected = try HMACSHA256.authenticationCode(for: signedContent(id: id, timestamp: timestamp, body: body), key: secret.bytes)
        for part in header.split(separator: " ") where part.hasPrefix("v1,") {
            if let data = Data(base64Encoded: String(part.dropFirst(3))), ConstantTime.equal(Array(data), expected) { return true }
        }
        return false
    }
}
