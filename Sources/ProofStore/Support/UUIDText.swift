import Cryptography
import Foundation

extension UUID {
    /// A UUID from its 36-character text, `8-4-4-4-12` hex digits in either case: what
    /// `UUID(uuidString:)` accepts, read from the bytes. Foundation parses with `sscanf`, which
    /// was a visible share of a bundle verifier's CPU (several UUIDs per proof), and which also
    /// lets a digit pair start with a space; this does not.
    public init?(text: String) {
        // Native strings hand their UTF-8 over in place; any other is copied, never parsed by
        // Foundation's looser rules.
        let parsed = text.utf8.withContiguousStorageIfAvailable(Self.parse) ?? Array(text.utf8).withUnsafeBufferPointer(Self.parse)
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }

    /// ``init(text:)`` from the text's UTF-8 bytes in place (a reader that has not made a `String`).
    public init?(utf8 characters: UnsafeBufferPointer<UInt8>) {
        guard let parsed = Self.parse(characters) else { return nil }
        self.init(uuid: parsed)
    }

    private static func parse(_ characters: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard characters.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var index = 0
        let parsed = withUnsafeMutableBytes(of: &bytes) { out in
            for position in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard characters[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = Hex.value(ofDigit: characters[index]), let low = Hex.value(ofDigit: characters[index + 1]) else { return false }
                out[position] = high << 4 | low
                index += 2
            }
            return true
        }
        return parsed ? bytes : nil
    }

    /// The 36-character lower-case text (`uuidString.lowercased()`, without the formatting and
    /// the second string: facts digests and bundle documents write several per proof).
    public var lowercasedText: String {
        String(unsafeUninitializedCapacity: 36) { text in
            let digits: StaticString = "0123456789abcdef"
            var index = 0
            withUnsafeBytes(of: uuid) { bytes in
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = digits.utf8Start[Int(byte >> 4)]
                    text[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    index += 2
                }
            }
            return 36
        }
    }
}
