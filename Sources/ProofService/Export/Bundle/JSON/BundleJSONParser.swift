import Foundation
import ProofStore

/// A strict RFC 8259 parser for the JSON a bundle carries, written for the verifier's hot path:
/// `JSONDecoder` took 37 % of `countersign verify`'s CPU on a 40k-proof bundle
/// (docs/decisions/0028-export-and-verify-throughput.md). It refuses, with the offset: anything
/// but one value and whitespace, invalid UTF-8, raw control characters in strings, lone
/// surrogates, numbers outside the JSON grammar, a member name twice in one object (names compare
/// by their code points, after unescaping), and nesting deeper than ``maxDepth``. It never reads
/// past the buffer and never traps on hostile input.
///
/// ``read(_:_:)`` hands the parser to a reader of one fixed schema, which walks the document
/// member by member (``forEachMember(depth:_:)``), reads the members it needs by type and skips,
/// still checking, the rest (``skipValue(depth:)``). No tree is built: building one (a `String`
/// per value, an array per object) was the verifier's largest cost after inflating and hashing.
/// The tests build one on this same walk, as the reference the schema readers are held to.
struct BundleJSONParser {
    /// Deeper than any document of ours (a `metadata.json` nests three levels).
    static let maxDepth = 16
    /// Names of an object compared one by one up to this many members; past it, through a set
    /// (a hostile object of a hundred thousand names must not cost their square).
    static let linearNameLimit = 32

    /// A string as the document holds it: the bytes between its quotes when it has no escapes
    /// (the case of everything our writers write), else its decoded bytes (kept by the parser, so
    /// a token is plain data, cheap to keep for every name of an object). Already checked.
    enum Token {
        case plain(Range<Int>)
        /// The index of its bytes in ``decodedStrings``.
        case decoded(Int)
    }

    /// The document, valid for the parser's life (``read(_:_:)``'s buffer).
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position = 0
    /// The member names of the objects being read, innermost last, each object's from the count
    /// when it began: one array for the document, not one per object.
    private var names: [Token] = []
    /// The decoded bytes of every string with escapes read so far (in our documents, none).
    private var decodedStrings: [[UInt8]] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        names.reserveCapacity(64)
    }

    /// What `reader` reads from the one value `bytes` hold (at the parser's start); refused when
    /// anything but whitespace follows that value.
    static func read<Result>(_ bytes: some Collection<UInt8>,
                             _ reader: (inout BundleJSONParser) throws(BundleJSONError) -> Result) throws(BundleJSONError) -> Result {
        func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Swift.Result<Result, BundleJSONError> {
            Swift.Result { () throws(BundleJSONError) in
                var parser = BundleJSONParser(buffer)
                parser.skipWhitespace()
                let value = try reader(&parser)
                parser.skipWhitespace()
                guard parser.position == buffer.count else { throw .at(parser.position, "text after the JSON value") }
                return value
            }
        }
        if let result = bytes.withContiguousStorageIfAvailable(run) { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer(run).get()
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// The first byte of the value at `position`, or nil at the end.
    var next: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Checks the value at `position` and moves past it, keeping nothing.
    mutating func skipValue(depth: Int) throws(BundleJSONError) {
        guard let byte = next else { throw .at(position, "a value is missing") }
        switch byte {
        case UInt8(ascii: "{"):
            try forEachMember(depth: depth + 1) { (parser, _) throws(BundleJSONError) in try parser.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            try forEachElement(depth: depth + 1) { (parser) throws(BundleJSONError) in try parser.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw .at(position, "unexpected byte \(byte)")
        }
    }

    mutating func literal(_ word: StaticString) throws(BundleJSONError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw .at(position, "unexpected end") }
        let matches = word.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[position + $0] == expected[$0] } }
        guard matches else { throw .at(position, "unexpected literal") }
        position += count
    }

    /// Reads the object at `position` (`{`, at nesting `depth`): calls `member` with the parser at
    /// each member's value (whitespace skipped) and its name; `member` must read exactly that value.
    mutating func forEachMember(depth: Int, _ member: (inout BundleJSONParser, Token) throws(BundleJSONError) -> Void) throws(BundleJSONError) {
        guard depth <= Self.maxDepth else { throw .at(position, "nested too deeply") }
        guard next == UInt8(ascii: "{") else { throw .at(position, "expected an object") }
        position += 1
        let first = names.count
        defer { names.removeSubrange(first...) }
        // Our writers sort the names: while they ascend, a name above the last is new.
        var ascending = true
        var seen: Set<[UInt8]>?
        skipWhitespace()
        if next == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard next == UInt8(ascii: "\"") else { throw .at(position, "expected a member name") }
            let nameOffset = position
            let name = try scanString()
            if ascending, names.count > first, compare(names[names.count - 1], name) < 0 {
            } else if names.count - first < Self.linearNameLimit && seen == nil {
                ascending = names.count == first
                if names[first...].contains(where: { compare($0, name) == 0 }) { throw repeated(name, at: nameOffset) }
            } else {
                ascending = false
                if seen == nil { seen = Set(names[first...].map { withBytes(of: $0, Array.init) }) }
                guard seen!.insert(withBytes(of: name, Array.init)).inserted else { throw repeated(name, at: nameOffset) }
            }
            names.append(name)
            skipWhitespace()
            guard next == UInt8(ascii: ":") else { throw .at(position, "expected ':'") }
            position += 1
            skipWhitespace()
            try member(&self, name)
            skipWhitespace()
            guard let byte = next else { throw .at(position, "unterminated object") }
            if byte == UInt8(ascii: ",") {
                position += 1
            } else if byte == UInt8(ascii: "}") {
                position += 1
                return
            } else {
                throw .at(position, "expected ',' or '}'")
            }
        }
    }

    private func repeated(_ name: Token, at offset: Int) -> BundleJSONError {
        .at(offset, "member \"\(text(name))\" appears twice")
    }

    /// Reads the array at `position` (`[`, at nesting `depth`): calls `element` with the parser at
    /// each element (whitespace skipped); `element` must read exactly that value.
    mutating func forEachElement(depth: Int, _ element: (inout BundleJSONParser) throws(BundleJSONError) -> Void) throws(BundleJSONError) {
        guard depth <= Self.maxDepth else { throw .at(position, "nested too deeply") }
        guard next == UInt8(ascii: "[") else { throw .at(position, "expected an array") }
        position += 1
        skipWhitespace()
        if next == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            guard let byte = next else { throw .at(position, "unterminated array") }
            if byte == UInt8(ascii: ",") {
                position += 1
            } else if byte == UInt8(ascii: "]") {
                position += 1
                return
            } else {
                throw .at(position, "expected ',' or ']'")
            }
        }
    }

    /// `body` over the bytes `token` stands for.
    func withBytes<R>(of token: Token, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch token {
        case .plain(let range): body(UnsafeBufferPointer(rebasing: bytes[range]))
        case .decoded(let index): decodedStrings[index].withUnsafeBufferPointer(body)
        }
    }

    /// How the bytes of `a` order against those of `b` (negative, zero, positive), as UTF-8 bytes
    /// (which is code point order).
    private func compare(_ a: Token, _ b: Token) -> Int {
        if case .plain(let first) = a, case .plain(let second) = b {
            return Self.compare(UnsafeBufferPointer(rebasing: bytes[first]), UnsafeBufferPointer(rebasing: bytes[second]))
        }
        return withBytes(of: a) { a in withBytes(of: b) { b in Self.compare(a, b) } }
    }

    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        let order = common == 0 ? 0 : Int(memcmp(a.baseAddress!, b.baseAddress!, common))
        return order != 0 ? order : a.count - b.count
    }

    /// Whether `token` is exactly `expected` (a member name our readers look for: compared in
    /// place, length first, as a reader tries a dozen names for each member).
    func token(_ token: Token, is expected: StaticString) -> Bool {
        guard case .plain(let range) = token, expected.hasPointerRepresentation else {
            return withBytes(of: token) { found in
                expected.withUTF8Buffer { found.count == $0.count && Self.compare(found, $0) == 0 }
            }
        }
        // Length, then first byte, then the rest: most names a reader tries differ in the first two.
        return range.count == expected.utf8CodeUnitCount
            && (range.isEmpty || (bytes[range.lowerBound] == expected.utf8Start.pointee
                                  && memcmp(bytes.baseAddress! + range.lowerBound, expected.utf8Start, range.count) == 0))
    }

    /// The end of the run of 8-byte words from `start` of `bytes` that hold only printable ASCII
    /// other than `"` and `\\` (nothing a string's scan must stop at), found a word at a time.
    private static func plainASCII(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        /// High bit of each byte of `word` that is zero.
        func zeros(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highs }
        var index = start
        while index + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // For ASCII bytes (no carry between them), adding 0x60 sets the high bit exactly of
            // those of 0x20 and up; a word with any byte of 0x80 and up stops the run anyway.
            let control = ~(word &+ 0x6060_6060_6060_6060) & highs
            let stop = zeros(word ^ 0x2222_2222_2222_2222) | zeros(word ^ 0x5C5C_5C5C_5C5C_5C5C) | control | (word & highs)
            if stop != 0 { break }
            index += 8
        }
        return index
    }

    /// The text `token` stands for.
    func text(_ token: Token) -> String {
        switch token {
        case .plain(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .decoded(let index): String(decoding: decodedStrings[index], as: UTF8.self)
        }
    }

    /// Checks the string at `position` (its opening quote) and moves past it: the common case
    /// without escapes is one scan (and, only for non-ASCII bytes, one UTF-8 validation) in place.
    mutating func scanString() throws(BundleJSONError) -> Token {
        guard next == UInt8(ascii: "\"") else { throw .at(position, "expected a string") }
        let start = position + 1
        var index = start
        /// Every byte so far OR-ed: below 0x80 means ASCII, which needs no UTF-8 validation.
        var seen: UInt8 = 0
        // Eight bytes at a time past plain ASCII (a digest's 64 hex digits are most of a
        // metadata.json); the byte loop below takes whatever stops the skip.
        index = Self.plainASCII(in: bytes, from: index)
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                if seen >= 0x80, String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) == nil {
                    throw .at(start, "a string that is not UTF-8")
                }
                return .plain(start..<index)
            }
            seen |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .at(index, "a control character in a string") }
            index += 1
        }
        // Room for the whole string at once: its length is bounded by where its closing quote
        // lies (an audit event's details_text escapes a quote every few bytes, and grew its buffer
        // several times). Only the string's own bytes are reserved, so hostile input cannot ask for more.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(min(end, bytes.count) - start)
        decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                position = index + 1
                guard String(validating: decoded, as: UTF8.self) != nil else { throw .at(start, "a string that is not UTF-8") }
                decodedStrings.append(decoded)
                return .decoded(decodedStrings.count - 1)
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.count else { throw .at(index, "unterminated escape") }
                index += 1
                if let simple = JSONEscape.byte(for: bytes[index]) {
                    decoded.append(simple)
                } else if bytes[index] == UInt8(ascii: "u") {
                    let unit = try hex4(at: index + 1)
                    index += 4
                    var low: UInt32?
                    if JSONEscape.isHighSurrogate(unit) {
                        guard index + 6 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"), bytes[index + 2] == UInt8(ascii: "u") else {
                            throw .at(index, "a lone surrogate")
                        }
                        low = try hex4(at: index + 3)
                    }
                    guard let scalar = JSONEscape.scalar(unit, low: low) else { throw .at(index, "a lone surrogate") }
                    if low != nil { index += 6 }
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                } else {
                    throw .at(index, "an unknown escape")
                }
                index += 1
            default:
                // The run up to the next quote, backslash or control character, copied at once
                // (an audit event's details_text escapes a quote every few bytes, and its other
                // bytes are most of the line).
                var end = index
                while end < bytes.count, bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
                if end == index { throw .at(index, "a control character in a string") }
                decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                index = end
            }
        }
        throw .at(start - 1, "unterminated string")
    }

    private func hex4(at offset: Int) throws(BundleJSONError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw .at(offset, "a short \\u escape") }
        guard let value = JSONEscape.hex4(bytes, at: offset) else { throw .at(offset, "a bad \\u escape") }
        return value
    }

    /// The number at `position`, checked against `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: where its text lies.
    mutating func number() throws(BundleJSONError) -> Range<Int> {
        let start = position
        func digits() throws(BundleJSONError) {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            guard position > first else { throw .at(position, "a number without digits") }
        }
        guard position < bytes.count else { throw .at(position, "a number without digits") }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw .at(position, "a number without digits") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            try digits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            try digits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            try digits()
        }
        return start..<position
    }

    /// The text of the number at `range`.
    func numberText(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
