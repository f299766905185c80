import Foundation
import ProofStore

/// Writes the JSON text that `JSONSerialization` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes`, for the trees our resources build: `[String: Any]` and `[Any]` of
/// strings, integers, doubles, booleans and `NSNull` (and the `NSNumber`s that
/// `JSONSerialization.jsonObject` reads). It exists because `JSONSerialization` sorts keys with a
/// localized comparison and boxes every number, which made an NDJSON export slower than the ZIP
/// bundle that carries every file of every proof.
///
/// Keys are sorted by their UTF-8 bytes. For our keys (lower-case ASCII letters, `_`, digits that
/// never decide between two keys) that is the order `JSONSerialization` gives; `SortedJSONWriterTests`
/// holds the two outputs byte for byte equal on our resources and on random trees. Doubles are
/// written as their shortest round-trip text with a trailing `.0` dropped (`12`, `-0`, `1e+16`),
/// strings escaped as `JSONSerialization` escapes them (`\b \t \n \f \r`, other control characters
/// as `\u00XX`, `"` and `\`; `/` and non-ASCII as they are).
enum SortedJSONWriter {
    /// A value that JSON cannot hold: a non-finite number, or a type outside the list above.
    struct Unsupported: Error, CustomStringConvertible {
        var description: String
    }

    static func encode(_ value: Any) throws(Unsupported) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        try write(value, to: &out)
        return out
    }

    /// The class of the `NSNumber`s that hold booleans (`__NSCFBoolean`).
    private static let booleanClass: AnyClass = type(of: NSNumber(value: true))

    static func write(_ value: Any, to out: inout [UInt8]) throws(Unsupported) {
        switch value {
        case let text as String:
            JSONQuoting.append(text, to: &out, shortBackspaceAndFormFeed: true)
        case is NSNull:
            out.append(contentsOf: "null".utf8)
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONQuoting.append(key, to: &out, shortBackspaceAndFormFeed: true)
                out.append(UInt8(ascii: ":"))
                try write(member, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        default:
            try writeScalar(value, to: &out)
        }
    }

    /// Booleans and numbers: Swift's own types first (exact type checks, since a Swift `Bool`, `Int`
    /// or `Double` also casts to `NSNumber`), then `NSNumber` by what it holds.
    private static func writeScalar(_ value: Any, to out: inout [UInt8]) throws(Unsupported) {
        let kind = type(of: value)
        if kind == Bool.self, let flag = value as? Bool {
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        } else if kind == Int.self, let integer = value as? Int {
            out.append(contentsOf: String(integer).utf8)
        } else if kind == Int64.self, let integer = value as? Int64 {
            out.append(contentsOf: String(integer).utf8)
        } else if kind == Int32.self, let integer = value as? Int32 {
            out.append(contentsOf: String(integer).utf8)
        } else if kind == Double.self, let number = value as? Double {
            try appendDouble(number, to: &out)
        } else if let number = value as? NSNumber {
            if ObjectIdentifier(type(of: number)) == ObjectIdentifier(booleanClass) {
                out.append(contentsOf: (number.boolValue ? "true" : "false").utf8)
            } else if case let code = UInt8(bitPattern: number.objCType.pointee), code == UInt8(ascii: "d") || code == UInt8(ascii: "f") {
                try appendDouble(number.doubleValue, to: &out)
            } else {
                out.append(contentsOf: number.stringValue.utf8)
            }
        } else {
            throw Unsupported(description: "JSON cannot hold a value of type \(kind)")
        }
    }

    private static func appendDouble(_ value: Double, to out: inout [UInt8]) throws(Unsupported) {
        guard value.isFinite else { throw Unsupported(description: "JSON cannot hold the number \(value)") }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(contentsOf: text.utf8)
    }
}
