import Cryptography
import Foundation

/// How a delivery was closed: its reference, the status it ended in (`failed` or `cancelled`),
/// the reason, when and by which key. The digest is bound into the `delivery_failed` /
/// `delivery_cancelled` event as `closure_sha256` and derived again from the row by the verifier.
/// The encoding is in docs/audit.md ("Closure facts").
public enum ClosureFacts {
    /// The tag that starts the encoding.
    public static let tag = "countersign.closure-facts/v1"

    /// SHA-256 of the encoding of these facts.
    public static func digest(reference: String, status: String, reason: String, closedAtMicros: Int64, closedBy: UUID?) -> [UInt8] {
        var out = CanonicalEncoder()
        out.text(tag)
        out.text(reference)
        out.text(status)
        out.text(reason)
        out.int64(closedAtMicros)
        out.text(closedBy?.uuidString.lowercased())
        return SHA256.hash(out.bytes)
    }
}
