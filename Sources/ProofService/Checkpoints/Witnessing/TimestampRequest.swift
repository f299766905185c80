import Cryptography

/// An RFC 3161 `TimeStampReq` for SHA-256 of some bytes, written in DER by hand (it is five
/// fixed fields), and the few checks made on the `TimeStampResp` when it comes back; the token is
/// fully verified later by `countersign verify` (``TimestampVerifier``).
///
/// ```
/// TimeStampReq ::= SEQUENCE { version INTEGER (1), messageImprint SEQUENCE { hashAlgorithm
///     AlgorithmIdentifier (sha256, NULL), hashedMessage OCTET STRING }, nonce INTEGER, certReq BOOLEAN TRUE }
/// ```
public struct TimestampRequest: Sendable, Equatable {
    /// SHA-256 of the timestamped bytes.
    public let imprint: [UInt8]
    /// 8 random bytes, high bit clear (a positive INTEGER without padding).
    public let nonce: [UInt8]

    /// A request for `bytes`, with a fresh random nonce.
    public init(for bytes: [UInt8]) {
        imprint = SHA256.hash(bytes)
        var nonce = (0..<8).map { _ in UInt8.random(in: 0...255) }
        nonce[0] = nonce[0] & 0x7F | 0x40
        self.nonce = nonce
    }

    /// The DER bytes (`application/timestamp-query`).
    public var der: [UInt8] {
        let sha256 = Self.tlv(0x06, [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01])
        let algorithm = Self.tlv(0x30, sha256 + [0x05, 0x00])
        let messageImprint = Self.tlv(0x30, algorithm + Self.tlv(0x04, imprint))
        return Self.tlv(0x30, Self.tlv(0x02, [0x01]) + messageImprint + Self.tlv(0x02, nonce) + Self.tlv(0x01, [0xFF]))
    }

    /// Checks a `TimeStampResp`: PKIStatus granted (0) or grantedWithMods (1), a token present,
    /// and our imprint and nonce inside it (the signature itself is checked by `verify`).
    public func accepts(_ response: [UInt8]) -> Result<Void, WitnessError> {
        var reader = DERReader(response)
        guard let outer = reader.next(), outer.tag == 0x30 else { return .failure(.malformed(file: "TimeStampResp", reason: "not a SEQUENCE")) }
        var body = DERReader(outer.value)
        guard let statusInfo = body.next(), statusInfo.tag == 0x30 else {
            return .failure(.malformed(file: "TimeStampResp", reason: "no PKIStatusInfo"))
        }
        var statusReader = DERReader(statusInfo.value)
        guard let status = statusReader.next(), status.tag == 0x02, status.value.count == 1, status.value[0] <= 1 else {
            return .failure(.rejected(witness: "TSA", reason: "status not granted"))
        }
        guard let token = body.next(), token.tag == 0x30 else { return .failure(.rejected(witness: "TSA", reason: "no token")) }
        guard token.value.contains(subsequence: Self.tlv(0x04, imprint)), token.value.contains(subsequence: Self.tlv(0x02, nonce)) else {
            return .failure(.rejected(witness: "TSA", reason: "the token is not for this checkpoint (imprint or nonce differ)"))
        }
        return .success(())
    }

    /// A DER tag-length-value (definite length, short or long form).
    public static func tlv(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if value.count < 0x80 {
            length = [UInt8(value.count)]
        } else {
            var count = value.count
            var bytes: [UInt8] = []
            while count > 0 { bytes.insert(UInt8(count & 0xFF), at: 0); count >>= 8 }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + value
    }
}

/// Reads DER elements one after another (definite lengths only; enough for the top of a reply).
struct DERReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> (tag: UInt8, value: [UInt8])? {
        guard index + 2 <= bytes.count else { return nil }
        let tag = bytes[index]
        var length = Int(bytes[index + 1])
        index += 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count >= 1, count <= 4, index + count <= bytes.count else { return nil }
            length = bytes[index..<index + count].reduce(0) { $0 << 8 | Int($1) }
            index += count
        }
        guard length >= 0, index + length <= bytes.count else { return nil }
        defer { index += length }
        return (tag, Array(bytes[index..<index + length]))
    }
}

extension Array where Element == UInt8 {
    /// True when `needle` occurs in order, contiguously.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        for start in 0...(count - needle.count) where self[start] == needle[0] && Array(self[start..<start + needle.count]) == needle {
            return true
        }
        return false
    }
}
