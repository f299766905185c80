import Foundation

/// The bytes a device signs for one upload, exactly as the server rebuilds them (docs/api.md,
/// "Device signatures"; the server's `ProofStore.DeviceUploadMessage`): text tag, text delivery
/// reference, text key id (lower-case UUID), then the 32 raw bytes of the body's SHA-256, where a
/// text is `0x01`, its 4-byte big-endian length and its UTF-8 bytes.
enum DeviceUploadMessage {
    static let tag = "countersign.device-upload/v1"

    static func bytes(reference: String, keyID: UUID, bodySHA256: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for text in [tag, reference, keyID.uuidString.lowercased()] {
            let utf8 = Array(text.utf8)
            out.append(1)
            withUnsafeBytes(of: UInt32(utf8.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: utf8)
        }
        return out + bodySHA256
    }
}
