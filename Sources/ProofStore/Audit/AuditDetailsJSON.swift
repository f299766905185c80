/// An audit event's details as JSON text: one object of strings, keys in UTF-8 byte order, `/`
/// left as it is. These are the bytes Foundation's `JSONEncoder` gives with `.sortedKeys` and
/// `.withoutEscapingSlashes` (a test compares the two over every ASCII character), written
/// directly (``JSONText``): the encoder cost tens of microseconds per event, and every upload and
/// every read of a proof appends one.
enum AuditDetailsJSON {
    static func encode(_ details: [String: String]) -> String {
        JSONText.object { object in
            for key in details.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { object.string(key, details[key]) }
        }
    }

    /// The details `text` holds when it is one JSON object (RFC 8259) whose values are all
    /// strings; nil for anything else. Read by hand: `verify --database` reads each event's details
    /// several times, and Foundation's `JSONDecoder` was half of its CPU. A member name given twice
    /// is refused rather than resolved, since JSON readers disagree on which one wins.
    static func decode(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.object()
        }
    }

    /// A cursor over the UTF-8 of a details text (valid UTF-8: it comes from a `String`).
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D { at += 1 }
        }

        /// Skips white space, then takes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        mutating func object() -> [String: String]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var members: [String: String] = [:]
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard let name = string(), take(UInt8(ascii: ":")) else { return nil }
                    skipSpace()
                    guard let value = string(), members.updateValue(value, forKey: name) == nil else { return nil }
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            return at == bytes.count ? members : nil
        }

        /// A string starting at the cursor, unescaped; nil if it is not a valid JSON string.
        mutating func string() -> String? {
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            at += 1
            var start = at
            var unescaped: [UInt8]?  // only once an escape is met
            while at < bytes.count {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") {
                    let tail = UnsafeBufferPointer(rebasing: bytes[start..<at])
                    at += 1
                    guard var unescaped else { return String(decoding: tail, as: UTF8.self) }
                    unescaped.append(contentsOf: tail)
                    return String(decoding: unescaped, as: UTF8.self)
                }
                if byte < 0x20 { return nil }
                guard byte == UInt8(ascii: "\\") else { at += 1; continue }
                var text = unescaped ?? []
                unescaped = nil  // `text` alone holds the buffer, so appending does not copy it
                text.append(contentsOf: bytes[start..<at])
                at += 1
                guard at < bytes.count else { return nil }
                if let simple = JSONEscape.byte(for: bytes[at]) {
                    text.append(simple)
                } else if bytes[at] == UInt8(ascii: "u"), let scalar = escapedScalar() {
                    text.append(contentsOf: String(Character(scalar)).utf8)
                } else {
                    return nil
                }
                at += 1
                start = at
                unescaped = text
            }
            return nil
        }

        /// The scalar of `\uXXXX` (or a surrogate pair `\uD8xx\uDCxx`) with the cursor on its `u`;
        /// leaves the cursor on the last hex digit. A lone surrogate is nil.
        mutating func escapedScalar() -> Unicode.Scalar? {
            guard let unit = JSONEscape.hex4(bytes, at: at + 1) else { return nil }
            at += 4
            guard JSONEscape.isHighSurrogate(unit) else { return JSONEscape.scalar(unit) }
            guard at + 2 < bytes.count, bytes[at + 1] == UInt8(ascii: "\\"), bytes[at + 2] == UInt8(ascii: "u"),
                  let scalar = JSONEscape.scalar(unit, low: JSONEscape.hex4(bytes, at: at + 3)) else { return nil }
            at += 6
            return scalar
        }
    }
}
