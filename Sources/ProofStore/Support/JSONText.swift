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
        JSONQuoting.append(value, to: &bytes, shortBackspaceAndFormFeed: true)
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
        JSONQuoting.append(name, to: &bytes, shortBackspaceAndFormFeed: true)
        bytes.append(UInt8(ascii: ":"))
    }
}
