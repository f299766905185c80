import Foundation

/// The bytes a device signs for one upload (docs/api.md, "Device signatures"): the tag, the
/// delivery the upload is for, the signing key's id, and the SHA-256 of the exact request body
/// (as sent: compressed when sent compressed). Binding the reference stops a signed body being
/// re-targeted at another delivery; binding the key id stops a signature being presented under
/// another registration; the body digest pins every byte of the ink, time, place and device facts.
///
/// Encoding, in order: text tag, text reference, text key id (lower-case UUID), then the 32 raw
/// digest bytes; a *text* is `0x01`, the 4-byte big-endian length and the UTF-8 bytes (as in the
/// audit encodings). The SDK builds the same bytes (`CountersignClient`'s `DeviceUploadSigner`).
public enum DeviceUploadMessage {
    /// The tag that starts the message; a new layout gets a new tag.
    public static let tag = "countersign.device-upload/v1"

    /// The message for an upload of a body whose SHA-256 is `bodySHA256` to delivery `reference`, signed by key `keyID`.
    public static func bytes(reference: String, keyID: UUID, bodySHA256: [UInt8]) -> [UInt8] {
        var out = CanonicalEncoder()
        out.text(tag)
        out.text(reference)
        out.text(keyID.uuidString.lowercased())
        out.raw(bodySHA256)
        return out.bytes
    }
}
