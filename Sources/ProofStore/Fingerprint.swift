import Cryptography
import Foundation

extension Sequence where Element == UInt8 {
    /// Lower-case hexadecimal, two digits per byte.
    public var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// SHA-256 helpers shared by the stores and the API.
public enum Fingerprint {
    /// The SHA-256 of `bytes` (32 bytes).
    public static func sha256<Bytes: DataProtocol>(_ bytes: Bytes) -> [UInt8] {
        SHA256.hash(bytes)
    }
}
