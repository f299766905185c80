import ProofStore

/// Writes JSON by hand, deterministically: members in the order the caller writes them (callers
/// write them sorted), no spaces, strings escaped minimally (`"`, `\`, and control characters;
/// `/` and non-ASCII as they are), numbers as Swift's shortest round-trip text (`52.52`, `1e-05`,
/// `12.0`), which reads back to the same double in any correct JSON parser. Replaces
/// `JSONSerialization` in export bundles (version 3): it cost 57 % of an export's CPU (issue 23).
struct CanonicalJSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it, per open object or array.
    private var needsComma: [Bool] = [false]
    /// True right after a member's name: its value takes no comma.
    private var afterKey = false

    init(capacity: Int = 2048) {
        bytes.reserveCapacity(capacity)
    }

    /// Before a value: a comma unless it is a member's value or the first element.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    /// `{`, then members until ``endObject()``.
    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// A member's name; its value follows.
    mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    private mutating func value(_ write: (inout CanonicalJSONWriter) -> Void) {
        separate()
        write(&self)
    }

    mutating func string(_ value: String?) {
        guard let value else { return null() }
        self.value { $0.appendString(value) }
    }

    mutating func int(_ value: Int64) {
        self.value { $0.bytes.append(contentsOf: String(value).utf8) }
    }

    mutating func int(_ value: Int) { int(Int64(value)) }

    /// A double as its shortest round-trip text (finite values only: evidence never holds others; null else).
    mutating func number(_ value: Double?) {
        guard let value, value.isFinite else { return null() }
        self.value { $0.bytes.append(contentsOf: value.description.utf8) }
    }

    mutating func bool(_ value: Bool) {
        self.value { $0.bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    }

    mutating func null() {
        self.value { $0.bytes.append(contentsOf: "null".utf8) }
    }

    /// Already-valid JSON text, copied as it is (a stored jsonb object's text).
    mutating func raw(_ json: String) {
        self.value { $0.bytes.append(contentsOf: json.utf8) }
    }

    private mutating func appendString(_ value: String) {
        JSONQuoting.append(value, to: &bytes, shortBackspaceAndFormFeed: false)
    }
}
