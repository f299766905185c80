/// Reading JSON string escapes (RFC 8259 §7), shared by the service's strict readers: audit
/// details (``AuditDetailsJSON``) here and export bundles in ProofService, so both refuse and
/// decode exactly the same escapes.
public enum JSONEscape {
    /// The byte a one-letter escape `\<letter>` stands for (`"`, `\`, `/`, `b`, `f`, `n`, `r`,
    /// `t`); nil for any other letter (`u` included: see ``scalar(_:low:)``).
    @inlinable
    public static func byte(for letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): letter
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// Whether the UTF-16 unit of a `\uXXXX` escape must be followed by a low surrogate.
    @inlinable
    public static func isHighSurrogate(_ unit: UInt32) -> Bool { (0xD800..<0xDC00).contains(unit) }

    /// The scalar of `\uXXXX` (`unit`), or of the pair `\uXXXX\uYYYY` (`unit`, `low`); nil for a
    /// lone surrogate or a high one followed by anything but a low one.
    @inlinable
    public static func scalar(_ unit: UInt32, low: UInt32? = nil) -> Unicode.Scalar? {
        if isHighSurrogate(unit) {
            guard let low, (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        }
        return low == nil ? Unicode.Scalar(unit) : nil  // Unicode.Scalar refuses lone low surrogates
    }

    /// The value of the four hex digits at `start` of `bytes`, or nil.
    @inlinable
    public static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
        guard start >= 0, start + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[start..<start + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
