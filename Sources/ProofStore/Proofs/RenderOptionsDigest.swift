import Foundation
import Synchronization

/// The render options of a proof as facts: the members of their JSON object by name, each value
/// by kind, so the same options give the same bytes whether read from the text the service wrote
/// or from `render_options` as jsonb gives it back (which reorders keys and spacing but keeps
/// every value).
///
/// Encoding (docs/audit.md, "Proof facts"): the number of members as a 4-byte big-endian integer,
/// then, by member name in ascending UTF-8 byte order, the name as text and the value as one kind
/// byte — `b` boolean, `n` number, `s` string, `z` null — followed by `0x00`/`0x01` for a boolean,
/// the 8-byte big-endian IEEE 754 double of a number, the text of a string. Anything that is not a
/// flat JSON object of such values encodes as the single byte `0xFF`, which no stored proof's
/// options give.
public enum RenderOptionsDigest {
    enum Value: Decodable {
        case bool(Bool), number(Double), string(String), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null; return }
            if let bool = try? container.decode(Bool.self) { self = .bool(bool); return }
            if let number = try? container.decode(Double.self) { self = .number(number); return }
            self = .string(try container.decode(String.self))
        }
    }

    /// The last options encoded: every upload of a process stores the same options, so recording
    /// a proof costs no JSON decoding.
    private static let last = Mutex<(json: String, bytes: [UInt8])?>(nil)

    /// The canonical bytes of the options object `json`.
    public static func canonical(_ json: String) -> [UInt8] {
        if let cached = last.withLock({ $0 }), cached.json == json { return cached.bytes }
        let bytes = encode(json)
        last.withLock { $0 = (json, bytes) }
        return bytes
    }

    static func encode(_ json: String) -> [UInt8] {
        guard let members = try? JSONDecoder().decode([String: Value].self, from: Data(json.utf8)) else { return [0xFF] }
        var out = CanonicalEncoder()
        out.uint32(UInt32(members.count))
        for name in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out.text(name)
            switch members[name]! {
            case .bool(let value): out.raw([UInt8(ascii: "b"), value ? 1 : 0])
            case .number(let value):
                out.raw([UInt8(ascii: "n")])
                out.int64(Int64(bitPattern: value.bitPattern))
            case .string(let value):
                out.raw([UInt8(ascii: "s")])
                out.text(value)
            case .null: out.raw([UInt8(ascii: "z")])
            }
        }
        return out.bytes
    }
}
