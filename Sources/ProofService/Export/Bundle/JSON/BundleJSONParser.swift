import ProofStore

/// A strict RFC 8259 parser for the JSON a bundle carries, written for the verifier's hot path:
/// `JSONDecoder` took 37 % of `countersign verify`'s CPU on a 40k-proof bundle
/// (docs/decisions/0028-export-and-verify-throughput.md). It reads bytes directly into
/// ``BundleJSONValue``s and refuses, with the offset: anything but one value and whitespace,
/// invalid UTF-8, raw control characters in strings, lone surrogates, numbers outside the JSON
/// grammar, a member name twice in one object, and nesting deeper than ``maxDepth``. It never
/// reads past the buffer and never traps on hostile input.
struct BundleJSONParser {
    /// Deeper than any document of ours (a `metadata.json` nests three levels).
    static let maxDepth = 16

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The one value `bytes` hold (surrounded by whitespace only).
    static func parse(_ bytes: some Collection<UInt8>) throws(BundleJSONError) -> BundleJSONValue {
        let result: Result<BundleJSONValue, BundleJSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(BundleJSONError) in try parseBuffer(buffer) }
        }
        if let result { return try result.get() }
        let copied: Result<BundleJSONValue, BundleJSONError> = Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(BundleJSONError) in try parseBuffer(buffer) }
        }
        return try copied.get()
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) throws(BundleJSONError) -> BundleJSONValue {
        var parser = BundleJSONParser(buffer)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == buffer.count else { throw .at(parser.position, "text after the JSON value") }
        return value
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(BundleJSONError) -> BundleJSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw .at(position, "a value is missing") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw .at(position, "unexpected byte \(bytes[position])")
        }
    }

    private mutating func literal(_ word: StaticString) throws(BundleJSONError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw .at(position, "unexpected end") }
        let matches = word.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[position + $0] == expected[$0] } }
        guard matches else { throw .at(position, "unexpected literal") }
        position += count
    }

    private mutating func object(depth: Int) throws(BundleJSONError) -> BundleJSONValue {
        guard depth <= Self.maxDepth else { throw .at(position, "nested too deeply") }
        position += 1
        var members: [(String, BundleJSONValue)] = []
        members.reserveCapacity(8)
        var ascending = true
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw .at(position, "expected a member name") }
            let nameOffset = position
            let name = try string()
            // Our writers sort the names: while they ascend, a name above the last is new.
            // Otherwise a linear check (a few dozen members at most) is cheaper than a set.
            if ascending, let last = members.last?.0, last < name {
            } else {
                ascending = members.isEmpty
                if members.contains(where: { $0.0 == name }) { throw .at(nameOffset, "member \"\(name)\" appears twice") }
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw .at(position, "expected ':'") }
            position += 1
            members.append((name, try value(depth: depth)))
            skipWhitespace()
            guard position < bytes.count else { throw .at(position, "unterminated object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            } else {
                throw .at(position, "expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(BundleJSONError) -> BundleJSONValue {
        guard depth <= Self.maxDepth else { throw .at(position, "nested too deeply") }
        position += 1
        var elements: [BundleJSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw .at(position, "unterminated array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw .at(position, "expected ',' or ']'")
            }
        }
    }

    /// A string at `position` (its opening quote): the common case without escapes is one scan
    /// and one UTF-8 validation of the bytes in place.
    private mutating func string() throws(BundleJSONError) -> String {
        let start = position + 1
        var index = start
        /// Every byte so far OR-ed: below 0x80 means ASCII, which needs no UTF-8 validation.
        var seen: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                return seen < 0x80 ? String(decoding: text, as: UTF8.self) : try Self.validated(text, at: start)
            }
            seen |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .at(index, "a control character in a string") }
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                position = index + 1
                guard let text = String(validating: decoded, as: UTF8.self) else { throw .at(start, "a string that is not UTF-8") }
                return text
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

    private static func validated(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) throws(BundleJSONError) -> String {
        guard let text = String(validating: buffer, as: UTF8.self) else { throw .at(offset, "a string that is not UTF-8") }
        return text
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as its text.
    private mutating func number() throws(BundleJSONError) -> String {
        let start = position
        func digits() throws(BundleJSONError) {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            guard position > first else { throw .at(position, "a number without digits") }
        }
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
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }
}
