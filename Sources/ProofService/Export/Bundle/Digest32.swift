import Cryptography
import ProofStore

/// A SHA-256 digest held inline (four words, no heap array): what the bundle verifier keeps per
/// proof while it reads a bundle, so a million proofs cost tens of megabytes, not hundreds.
struct Digest32: Hashable, Sendable, CustomStringConvertible {
    var words: (UInt64, UInt64, UInt64, UInt64)

    init(_ bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        words = bytes.withUnsafeBytes { raw in
            func word(_ at: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            return (word(0), word(8), word(16), word(24))
        }
    }

    /// From 64 hex digits (either case); nil otherwise. Straight into the words, without an
    /// array: the verifier reads several per proof.
    init?(hex: String) {
        self.init(hexDigits: hex.utf8)
    }

    /// From 64 hex digits given as bytes (a line of a checksums file, unread as text).
    init?(hexDigits: some Sequence<UInt8>) {
        // A verifier reads a dozen digests per proof: parse from a buffer when the bytes have one.
        let parsed: Digest32?? = hexDigits.withContiguousStorageIfAvailable { Self(buffer: $0) }
        guard let digest = parsed ?? Self(buffer: Array(hexDigits)) else { return nil }
        self = digest
    }

    private init?(buffer digits: UnsafeBufferPointer<UInt8>) {
        guard digits.count == 64 else { return nil }
        var invalid: UInt8 = 0
        func word(_ first: Int) -> UInt64 {
            var word: UInt64 = 0
            for index in first..<first + 16 {
                let value = Self.nibbles[Int(digits[index])]
                invalid |= value
                word = word << 4 | UInt64(value & 0x0F)
            }
            return word
        }
        let words = (word(0), word(16), word(32), word(48))
        guard invalid & 0x80 == 0 else { return nil }
        self.words = words
    }

    init?(buffer: [UInt8]) {
        guard let digest = buffer.withUnsafeBufferPointer({ Self(buffer: $0) }) else { return nil }
        self = digest
    }

    /// Each byte's hex value, or 0x80 for a byte that is not a hex digit (either case).
    private static let nibbles: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0x80
        }
    }

    /// SHA-256 of `data`.
    static func of(_ data: some Collection<UInt8>) -> Digest32 { Digest32(SHA256.hash(data)) }

    var bytes: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        append(to: &bytes)
        return bytes
    }

    /// Appends the 32 bytes to `out` (big-endian words), without an array of its own.
    func append(to out: inout [UInt8]) {
        withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)) { out.append(contentsOf: $0) }
    }

    /// Lower-case hex, from the words' bytes in place (an export writes several per proof).
    var description: String {
        withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)) { Hex.encode($0) }
    }

    static func == (lhs: Digest32, rhs: Digest32) -> Bool { lhs.words == rhs.words }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
