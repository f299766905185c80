/// JSON text written directly, for the small documents the service writes on every upload (audit
/// details, webhook event data): Foundation's `JSONEncoder` cost tens of microseconds per document
/// (docs/decisions/0027-upload-cost.md). Strings are escaped as `JSONEncoder` escapes them with
/// `.withoutEscapingSlashes` (AuditDetailsJSONTests compares the two over every ASCII character).
enum JSONText {
    /// An object of `members` written in order by `write` (give the names in the order wanted:
    /// ``AuditDetailsJSON`` and the webhook events give them sorted, as `.sortedKeys` did).
    static func object(_ write: (inout JSONObject) -> Void) -> String {
        var object = JSONObject()
        write(&object)
        return object.finished
    }

    /// `text` as a JSON string: `"` and `\` escaped, control characters as `\b \t \n \f \r` or
    /// `\u00xx`, everything else (UTF-8 included) as it is.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0..<0x20: out += Array(#"\u00"#.utf8) + Array(CollectionOfOne(byte).hexString.utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// One JSON object being written by ``JSONText/object(_:)``.
struct JSONObject {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    /// A string member; `nil` is written as `null` when `keepingNull`, else left out (as
    /// `JSONEncoder` leaves out a nil optional).
    mutating func string(_ name: String, _ value: String?, keepingNull: Bool = false) {
        guard let value else {
            if keepingNull { member(name); bytes += Array("null".utf8) }
            return
        }
        member(name)
        JSONText.appendString(value, to: &bytes)
    }

    /// A member that is an object of strings, keys in UTF-8 byte order.
    mutating func strings(_ name: String, _ members: [String: String]) {
        object(name) { object in
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { object.string(key, members[key]) }
        }
    }

    /// A member that is an object written by `write`.
    mutating func object(_ name: String, _ write: (inout JSONObject) -> Void) {
        member(name)
        var inner = JSONObject()
        write(&inner)
        bytes += inner.bytes + [UInt8(ascii: "}")]
    }

    var finished: String { String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self) }

    private mutating func member(_ name: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        JSONText.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
