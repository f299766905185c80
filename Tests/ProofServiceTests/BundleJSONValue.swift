@testable import ProofService

/// A JSON value built on ``BundleJSONParser``'s walk, with strict typed access: the tree the
/// verifier read documents through before its schema readers read them in one pass, kept here as
/// the reference they are held to (``BundleProofReadingTests``) and to test the parser itself.
/// Numbers keep their text, so an integer member refuses `1.5` and `1e3` rather than rounding them.
enum BundleJSONValue: Sendable, Equatable {
    case object([(String, BundleJSONValue)])
    case array([BundleJSONValue])
    case string(String)
    /// The number's text, as it stood (already checked against the JSON number grammar).
    case number(String)
    case bool(Bool)
    case null

    static func == (lhs: BundleJSONValue, rhs: BundleJSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// The members of an object (in document order; the parser refuses duplicate names).
    func members(_ what: String) throws(BundleJSONError) -> [(String, BundleJSONValue)] {
        guard case .object(let members) = self else { throw BundleJSONError("\(what) is not an object") }
        return members
    }

    /// The member `name` of this object, or nil when it is absent.
    func member(_ name: String) -> BundleJSONValue? {
        guard case .object(let members) = self else { return nil }
        for (key, value) in members where key == name { return value }
        return nil
    }

    /// The member `name`, which must be present.
    func required(_ name: String) throws(BundleJSONError) -> BundleJSONValue {
        guard case .object = self else { throw BundleJSONError("expected an object holding \(name)") }
        guard let value = member(name) else { throw BundleJSONError("\(name) is missing") }
        return value
    }

    func string(_ name: String) throws(BundleJSONError) -> String {
        guard case .string(let text) = try required(name) else { throw BundleJSONError("\(name) is not a string") }
        return text
    }

    /// A string member that may be absent or null.
    func optionalString(_ name: String) throws(BundleJSONError) -> String? {
        switch member(name) {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw BundleJSONError("\(name) is not a string or null")
        }
    }

    func int64(_ name: String) throws(BundleJSONError) -> Int64 {
        guard case .number(let text) = try required(name), let value = Int64(text) else {
            throw BundleJSONError("\(name) is not an integer")
        }
        return value
    }

    func int32(_ name: String) throws(BundleJSONError) -> Int32 {
        guard let value = Int32(exactly: try int64(name)) else { throw BundleJSONError("\(name) is out of range") }
        return value
    }

    func int16(_ name: String) throws(BundleJSONError) -> Int16 {
        guard let value = Int16(exactly: try int64(name)) else { throw BundleJSONError("\(name) is out of range") }
        return value
    }

    func int(_ name: String) throws(BundleJSONError) -> Int { Int(try int64(name)) }

    func double(_ name: String) throws(BundleJSONError) -> Double {
        guard let value = try optionalDouble(name) else { throw BundleJSONError("\(name) is not a number") }
        return value
    }

    /// A number member that may be absent or null.
    func optionalDouble(_ name: String) throws(BundleJSONError) -> Double? {
        switch member(name) {
        case nil, .null?: return nil
        case .number(let text)?:
            guard let value = Double(text), value.isFinite else { throw BundleJSONError("\(name) is out of range") }
            return value
        default: throw BundleJSONError("\(name) is not a number or null")
        }
    }

    /// An object member that may be absent or null.
    func optionalObject(_ name: String) throws(BundleJSONError) -> BundleJSONValue? {
        switch member(name) {
        case nil, .null?: return nil
        case let value? where value.isObject: return value
        default: throw BundleJSONError("\(name) is not an object or null")
        }
    }

    func object(_ name: String) throws(BundleJSONError) -> BundleJSONValue {
        let value = try required(name)
        guard value.isObject else { throw BundleJSONError("\(name) is not an object") }
        return value
    }

    func strings(_ name: String) throws(BundleJSONError) -> [String] {
        guard case .array(let elements) = try required(name) else { throw BundleJSONError("\(name) is not an array") }
        var out: [String] = []
        out.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let text) = element else { throw BundleJSONError("\(name) holds a value that is not a string") }
            out.append(text)
        }
        return out
    }

    var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}

extension BundleJSONParser {
    /// The one value `bytes` hold (surrounded by whitespace only), as a tree.
    static func parse(_ bytes: some Collection<UInt8>) throws(BundleJSONError) -> BundleJSONValue {
        try read(bytes) { (parser: inout BundleJSONParser) throws(BundleJSONError) in try parser.value(depth: 0) }
    }

    private mutating func value(depth: Int) throws(BundleJSONError) -> BundleJSONValue {
        switch next {
        case UInt8(ascii: "{"):
            var members: [(String, BundleJSONValue)] = []
            try forEachMember(depth: depth + 1) { (parser, name) throws(BundleJSONError) in
                members.append((parser.text(name), try parser.value(depth: depth + 1)))
            }
            return .object(members)
        case UInt8(ascii: "["):
            var elements: [BundleJSONValue] = []
            try forEachElement(depth: depth + 1) { (parser) throws(BundleJSONError) in elements.append(try parser.value(depth: depth + 1)) }
            return .array(elements)
        case UInt8(ascii: "\""):
            let token = try scanString()
            return .string(text(token))
        default:
            // A literal or a number: checked by the parser, kept as the text it stands as.
            let start = position
            try skipValue(depth: depth)
            switch text(from: start) {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            case let number: return .number(number)
            }
        }
    }
}
