import Cryptography
import Foundation

/// What a delivery says: its reference, recipient, address and destination. Their digest is bound
/// into the `delivery_created` event as `delivery_sha256`, so editing them afterwards is found by
/// verification. The encoding is in docs/audit.md ("Delivery facts").
public enum DeliveryFacts {
    /// The tag that starts the encoding.
    public static let tag = "countersign.delivery-facts/v1"

    /// SHA-256 of the encoding of these facts.
    public static func digest(reference: String, recipientName: String, address: String, destination: GeoPoint?) -> [UInt8] {
        var out = CanonicalEncoder()
        out.text(tag)
        out.text(reference)
        out.text(recipientName)
        out.text(address)
        out.number(destination?.lat)
        out.number(destination?.lon)
        return SHA256.hash(out.bytes)
    }
}
