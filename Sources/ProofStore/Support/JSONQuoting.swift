/// A JSON string literal: `"`, `\` and control characters escaped, everything else (`/`, non-ASCII)
/// copied as it is. Runs without an escape are copied whole. Every JSON writer of the service
/// quotes with it; they differ in one rule only, which they must keep: bundles' canonical JSON
/// (ProofService's `CanonicalJSONWriter`) writes backspace and form feed as `\u0008` and `\u000c`;
/// the audit details and webhook events (``JSONText``, as `JSONEncoder` did) and the proof
/// resources (ProofService's `SortedJSONWriter`, as `JSONSerialization` did) write `\b` and `\f`.
public enum JSONQuoting {
    public static func append(_ text: String, to out: inout [UInt8], shortBackspaceAndFormFeed: Bool) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: bytes[start..<index])
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case 0x09: out.append(contentsOf: #"\t"#.utf8)
                case 0x0A: out.append(contentsOf: #"\n"#.utf8)
                case 0x0D: out.append(contentsOf: #"\r"#.utf8)
                case 0x08 where shortBackspaceAndFormFeed: out.append(contentsOf: #"\b"#.utf8)
                case 0x0C where shortBackspaceAndFormFeed: out.append(contentsOf: #"\f"#.utf8)
                default:
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: bytes[start...])
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
