/// A minimal, allocation-free JSON tokenizer over raw bytes used by the ink and signature_pad
/// parsers. It never recurses: unknown values are skipped with an explicit depth counter.
struct JSONScanner {
    /// A string token: the byte range between the quotes (escapes not decoded).
    struct StringToken {
        var start: Int
        var end: Int
        var hasEscapes: Bool
    }

    let p: UnsafePointer<UInt8>
    let end: Int
    var pos: Int = 0
    let maxDepth: Int

    init(_ p: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.p = p
        self.end = count
        self.maxDepth = maxDepth
    }

    // MARK: Errors

    func error(_ message: String, at offset: Int? = nil) -> InkError {
        InkError(.invalidJSON, message, offset: offset ?? pos)
    }

    func describeByte(at i: Int) -> String {
        guard i < end else { return "end of input" }
        switch p[i] {
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        default: return "'\(Character(Unicode.Scalar(p[i])))'"
        }
    }

    // MARK: Basics

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < end {
            let c = p[pos]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { pos += 1 } else { return }
        }
    }

    @inline(__always)
    func peek() -> UInt8? { pos < end ? p[pos] : nil }

    @inline(__always)
    mutating func expect(_ c: UInt8, _ what: StaticString) throws(InkError) {
        guard pos < end, p[pos] == c else {
            throw error("expected \(what), found \(describeByte(at: pos))")
        }
        pos += 1
    }

    /// Requires that only whitespace is left.
    mutating func expectEnd() throws(InkError) {
        skipWhitespace()
        if pos != end { throw error("unexpected \(describeByte(at: pos)) after the top-level value") }
    }

    // MARK: Numbers

    /// Reads a JSON number at the current position.
    @inline(__always)
    mutating func readNumber(stroke: Int? = nil, point: Int? = nil, what: String) throws(InkError) -> Double {
        let start = pos
        guard pos < end, p[pos] == UInt8(ascii: "-") || p[pos] &- 48 < 10 else {
            if pos < end, JSONScanner.startsValue(p[pos]) {
                throw InkError(.wrongType, "\(what) must be a number, found \(describeByte(at: pos))",
                               stroke: stroke, point: point, offset: pos)
            }
            throw error("expected a number for \(what), found \(describeByte(at: pos))")
        }
        switch NumberScanner.scan(p, &pos, end, json: true) {
        case .value(let v):
            if !v.isFinite {
                throw InkError(.notFinite, "\(what) is not a finite number", stroke: stroke, point: point, offset: start)
            }
            return v
        case .invalid:
            throw error("malformed number", at: start)
        }
    }

    // MARK: Strings

    /// Reads a string token at the current position (which must be `"`), validating escapes.
    mutating func readString() throws(InkError) -> StringToken {
        try expect(UInt8(ascii: "\""), "'\"'")
        let start = pos
        var escapes = false
        while pos < end {
            let c = p[pos]
            if c == UInt8(ascii: "\"") {
                let t = StringToken(start: start, end: pos, hasEscapes: escapes)
                pos += 1
                return t
            }
            if c < 0x20 { throw error("control character in string") }
            if c == UInt8(ascii: "\\") {
                escapes = true
                pos += 1
                guard pos < end else { break }
                switch p[pos] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    pos += 1
                case UInt8(ascii: "u"):
                    guard pos + 4 < end else { throw error("truncated \\u escape") }
                    for k in 1...4 where JSONScanner.hexValue(p[pos + k]) == nil {
                        throw error("bad \\u escape")
                    }
                    pos += 5
                default:
                    throw error("bad escape sequence")
                }
                continue
            }
            pos += 1
        }
        throw error("unterminated string", at: start - 1)
    }

    /// Whether `c` can start a JSON value other than a number.
    static func startsValue(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            return true
        default:
            return false
        }
    }

    static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - 48)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - 87)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - 55)
        default: return nil
        }
    }

    /// Decodes a (validated) string token.
    func decode(_ t: StringToken) -> String {
        let raw = UnsafeBufferPointer(start: p + t.start, count: t.end - t.start)
        if !t.hasEscapes { return String(decoding: raw, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var bytes: [UInt8] = []
        func flush() {
            if !bytes.isEmpty {
                scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
                bytes.removeAll()
            }
        }
        var i = 0
        var pendingHigh: UInt32? = nil
        while i < raw.count {
            let c = raw[i]
            if c != UInt8(ascii: "\\") {
                bytes.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            var scalar: UInt32
            switch e {
            case UInt8(ascii: "b"): scalar = 8
            case UInt8(ascii: "f"): scalar = 12
            case UInt8(ascii: "n"): scalar = 10
            case UInt8(ascii: "r"): scalar = 13
            case UInt8(ascii: "t"): scalar = 9
            case UInt8(ascii: "u"):
                scalar = 0
                for k in 0..<4 { scalar = scalar << 4 | (JSONScanner.hexValue(raw[i + k]) ?? 0) }
                i += 4
            default: scalar = UInt32(e)
            }
            flush()
            if scalar >= 0xD800 && scalar < 0xDC00 {
                pendingHigh = scalar
                continue
            }
            if scalar >= 0xDC00 && scalar < 0xE000, let high = pendingHigh {
                scalar = 0x10000 + ((high - 0xD800) << 10) + (scalar - 0xDC00)
            }
            pendingHigh = nil
            scalars.append(Unicode.Scalar(scalar) ?? "\u{FFFD}")
        }
        flush()
        return String(scalars)
    }

    /// Whether the token's bytes equal `name` (ASCII, no escapes needed in our member names).
    func equals(_ t: StringToken, _ name: StaticString) -> Bool {
        if t.hasEscapes {
            return decode(t) == name.description
        }
        let n = name.utf8CodeUnitCount
        guard t.end - t.start == n else { return false }
        let q = name.utf8Start
        for k in 0..<n where p[t.start + k] != q[k] { return false }
        return true
    }

    // MARK: Containers

    /// Call after `{`: returns the next member key (positioned at its value) or `nil` at `}`.
    mutating func nextMember(_ first: inout Bool) throws(InkError) -> StringToken? {
        skipWhitespace()
        if first {
            first = false
            if peek() == UInt8(ascii: "}") { pos += 1; return nil }
        } else {
            if peek() == UInt8(ascii: "}") { pos += 1; return nil }
            try expect(UInt8(ascii: ","), "',' or '}'")
            skipWhitespace()
        }
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name, found \(describeByte(at: pos))") }
        let key = try readString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':'")
        skipWhitespace()
        return key
    }

    /// Call after `[`: returns `true` when another element follows (positioned at it),
    /// `false` at `]`.
    mutating func nextElement(_ first: inout Bool) throws(InkError) -> Bool {
        skipWhitespace()
        if first {
            first = false
            if peek() == UInt8(ascii: "]") { pos += 1; return false }
        } else {
            if peek() == UInt8(ascii: "]") { pos += 1; return false }
            try expect(UInt8(ascii: ","), "',' or ']'")
            skipWhitespace()
        }
        return true
    }

    /// One open container while ``skipValue(depth:at:)`` walks a value.
    struct OpenContainer {
        var isObject: Bool
        /// An object's member names so far (a name twice is refused).
        var names: Set<String> = []
        /// An object's current member name, an array's current index: the container's step in a
        /// JSON pointer.
        var key = ""
        var index = 0

        var pointerStep: String { isObject ? "/" + JSONScanner.escapePointer(key) : "/\(index)" }
    }

    /// Skips one complete value of any type without recursion, checking that no object in it has
    /// a member name twice. `depth` is the nesting depth of the container the value sits in;
    /// `path` is the value's JSON pointer, for the error naming a duplicate.
    mutating func skipValue(depth: Int, at path: String = "") throws(InkError) {
        var open: [OpenContainer] = []
        var expectingValue = true
        while true {
            skipWhitespace()
            guard pos < end else { throw error("unexpected end of input") }
            if expectingValue {
                let c = p[pos]
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if depth + open.count + 1 > maxDepth {
                        throw InkError(.nestingTooDeep, "nesting deeper than \(maxDepth) levels", offset: pos)
                    }
                    pos += 1
                    open.append(OpenContainer(isObject: c == UInt8(ascii: "{")))
                    skipWhitespace()
                    if peek() == (c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        pos += 1
                        open.removeLast()
                        expectingValue = false
                    } else if c == UInt8(ascii: "{") {
                        try readMemberName(&open, path: path)
                    }
                    if !expectingValue && open.isEmpty { return }
                    continue
                case UInt8(ascii: "\""):
                    _ = try readString()
                case UInt8(ascii: "t"): try literal("true")
                case UInt8(ascii: "f"): try literal("false")
                case UInt8(ascii: "n"): try literal("null")
                default:
                    let start = pos
                    guard c == UInt8(ascii: "-") || c &- 48 < 10,
                          case .value = NumberScanner.scan(p, &pos, end, json: true) else {
                        throw error("unexpected \(describeByte(at: start))", at: start)
                    }
                }
                expectingValue = false
                if open.isEmpty { return }
                continue
            }
            // After a value inside a container: ',' or the closing bracket.
            let isObject = open[open.count - 1].isObject
            let c = p[pos]
            if c == UInt8(ascii: ",") {
                pos += 1
                if isObject {
                    skipWhitespace()
                    try readMemberName(&open, path: path)
                } else {
                    open[open.count - 1].index += 1
                }
                expectingValue = true
            } else if c == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                pos += 1
                open.removeLast()
                if open.isEmpty { return }
            } else {
                throw error("expected ',' or '\(isObject ? "}" : "]")', found \(describeByte(at: pos))")
            }
        }
    }

    /// Reads `"name":` of the innermost open object, refusing a name it already has.
    private mutating func readMemberName(_ open: inout [OpenContainer], path: String) throws(InkError) {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
        let token = try readString()
        let name = decode(token)
        guard open[open.count - 1].names.insert(name).inserted else {
            let object = path + open.dropLast().map(\.pointerStep).joined()
            var duplicate = InkError(.duplicateField, "\"\(name)\" appears twice in \(object.isEmpty ? "the object" : object)",
                                     offset: token.start - 1)
            duplicate.pointer = object + "/" + Self.escapePointer(name)
            throw duplicate
        }
        open[open.count - 1].key = name
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':'")
    }

    /// `name` as one step of a JSON pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
    static func escapePointer(_ name: String) -> String {
        guard name.contains("~") || name.contains("/") else { return name }
        var escaped = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    mutating func literal(_ word: StaticString) throws(InkError) {
        let n = word.utf8CodeUnitCount
        guard pos + n <= end else { throw error("unexpected end of input") }
        for k in 0..<n where p[pos + k] != word.utf8Start[k] {
            throw error("invalid literal")
        }
        pos += n
    }
}
