import Cryptography
import ProofStore

/// A SHA-256 digest held inline (four words, no heap array): what the bundle verifier keeps per
/// proof while it reads a bundle, so a million proofs cost tens of megabytes, not hundreds.
struct Digest32: Hashable, Sendable, CustomStringConvertible {
    var words: (UInt64, UInt64, UInt64, UInt64)

    init(_ bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(8), word(16), word(24))
    }

    /// From 64 hex digits (either case); nil otherwise. Straight into the words, without an
    /// array: the verifier reads several per proof.
    init?(hex: String) {
        self.init(hexDigits: hex.utf8)
    }

    /// From 64 hex digits given as bytes (a line of a checksums file, unread as text).
    init?(hexDigits: some Sequence<UInt8>) {
        var word: UInt64 = 0, words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var count = 0
        for byte in hexDigits {
            guard count < 64, let value = Self.nibble(byte) else { return nil }
            word = word << 4 | UInt64(value)
            count += 1
            switch count {
            case 16: words.0 = word
            case 32: words.1 = word
            case 48: words.2 = word
            case 64: words.3 = word
            default: continue
            }
        }
        guard count == 64 else { return nil }
        self.words = words
    }

    /// SHA-256 of `data`.
    static func of(_ data: [UInt8]) -> Digest32 { Digest32(SHA256.hash(data)) }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    var bytes: [UInt8] {
        [words.0, words.1, words.2, words.3].flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64($0))) } }
    }

    /// Lower-case hex.
    var description: String { bytes.hexString }

    static func == (lhs: Digest32, rhs: Digest32) -> Bool { lhs.words == rhs.words }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
