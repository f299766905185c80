import Foundation
import ProofStore

// Typed reads for a reader of one fixed schema (``BundleJSONParser/read(_:_:)``): each reads the
// value at the parser's position, and `name` names the member in the error when it has another type.
extension BundleJSONParser {
    /// Whether the value at the position is an object.
    var atObject: Bool { next == UInt8(ascii: "{") }

    /// The object `name` (the value at the position), read member by member as
    /// ``forEachMember(depth:_:)`` reads it; "`name` is not an object" when it is anything else.
    mutating func readObject(_ name: String, depth: Int,
                             _ member: (inout BundleJSONParser, Token) throws(BundleJSONError) -> Void) throws(BundleJSONError) {
        guard atObject else { throw BundleJSONError("\(name) is not an object") }
        try forEachMember(depth: depth, member)
    }

    /// Whether the value at the position is `null`, which is then read.
    mutating func readNull() throws(BundleJSONError) -> Bool {
        guard next == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// `true` or `false`; "`name` is not a boolean" otherwise.
    mutating func readBool(_ name: String) throws(BundleJSONError) -> Bool {
        switch next {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw BundleJSONError("\(name) is not a boolean")
        }
    }

    mutating func readString(_ name: String) throws(BundleJSONError) -> String {
        guard next == UInt8(ascii: "\"") else { throw BundleJSONError("\(name) is not a string") }
        let token = try scanString()
        return text(token)
    }

    /// A string or null.
    mutating func readOptionalString(_ name: String) throws(BundleJSONError) -> String? {
        if try readNull() { return nil }
        guard next == UInt8(ascii: "\"") else { throw BundleJSONError("\(name) is not a string or null") }
        let token = try scanString()
        return text(token)
    }

    /// A string of 64 hex digits, read straight into a digest: nil when the string is anything else.
    mutating func readDigest(_ name: String) throws(BundleJSONError) -> Digest32? {
        guard next == UInt8(ascii: "\"") else { throw BundleJSONError("\(name) is not a string") }
        let token = try scanString()
        return withBytes(of: token) { Digest32(hexDigits: $0) }
    }

    /// A UUID's 36-character text, read from its bytes in place; "`name` is not a UUID" otherwise.
    mutating func readUUID(_ name: String) throws(BundleJSONError) -> UUID {
        guard next == UInt8(ascii: "\"") else { throw BundleJSONError("\(name) is not a string") }
        let token = try scanString()
        guard let id = withBytes(of: token, { UUID(utf8: $0) }) else { throw BundleJSONError("\(name) is not a UUID") }
        return id
    }

    /// Whether the value at the position is a number.
    var atNumber: Bool {
        guard let byte = next else { return false }
        return byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// An integer: a number without fraction or exponent, within `Int64` (its text parsed in place:
    /// the microsecond times are too long for a string kept inline).
    mutating func readInt64(_ name: String) throws(BundleJSONError) -> Int64 {
        guard atNumber else { throw BundleJSONError("\(name) is not an integer") }
        let range = try number()
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        // Accumulated below zero, where Int64.min fits.
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw BundleJSONError("\(name) is not an integer") }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, underflowed) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflowed, !underflowed else { throw BundleJSONError("\(name) is not an integer") }
            value = next
            index += 1
        }
        if negative { return value }
        guard value != .min else { throw BundleJSONError("\(name) is not an integer") }
        return -value
    }

    mutating func readInt32(_ name: String) throws(BundleJSONError) -> Int32 {
        guard let value = Int32(exactly: try readInt64(name)) else { throw BundleJSONError("\(name) is out of range") }
        return value
    }

    /// A finite number or null.
    mutating func readOptionalDouble(_ name: String) throws(BundleJSONError) -> Double? {
        if try readNull() { return nil }
        guard atNumber else { throw BundleJSONError("\(name) is not a number or null") }
        let range = try number()
        guard let value = exactDouble(range) ?? Double(numberText(range)), value.isFinite else {
            throw BundleJSONError("\(name) is out of range")
        }
        return value
    }

    /// The number at `range` when it is a decimal of at most 15 digits with at most 22 after the
    /// point and no exponent (our coordinates, distances and options): an integer below 2^53
    /// divided by a power of ten below 2^53 is one correctly rounded IEEE division, so this is the
    /// value `Double(text)` gives, without building the text. Nil otherwise.
    private func exactDouble(_ range: Range<Int>) -> Double? {
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0, digits = 0, fraction = -1
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                fraction = 0
            } else {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }  // an exponent
                mantissa = mantissa &* 10 &+ UInt64(digit)
                digits += 1
                if fraction >= 0 { fraction += 1 }
            }
            index += 1
        }
        guard digits <= 15, fraction <= 22 else { return nil }
        let value = fraction > 0 ? Double(mantissa) / Self.powersOfTen[fraction] : Double(mantissa)
        return negative ? -value : value
    }

    /// 10^0 through 10^22, each exact in a Double.
    private static let powersOfTen: [Double] = (0...22).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

    mutating func readDouble(_ name: String) throws(BundleJSONError) -> Double {
        guard let value = try readOptionalDouble(name) else { throw BundleJSONError("\(name) is not a number") }
        return value
    }

    /// The text of the document from `start` to the position (a value just read, as it stood).
    func text(from start: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }
}
