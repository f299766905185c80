/// What a free-text field of a request (a signer's or recipient's name, an address, device facts)
/// may hold. Lengths count Unicode code points, as JSON Schema's `maxLength` does.
///
/// Control characters (C0 including NUL, DEL, C1) and the bidirectional embedding, override and
/// isolate characters are refused, never removed: evidence is stored as sent or not at all, and a
/// name must read the same in every viewer (a bidi override can make "Ada" display as "adA").
public enum TextRules {
    /// Whether `scalar` may appear in a text field.
    public static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: false          // C0, DEL, C1 controls
        case 0x202A...0x202E, 0x2066...0x2069: false  // bidi embeddings, overrides, isolates
        default: true
        }
    }

    /// The field errors of `value` at `field`: a refused character, or a length outside `lengths`
    /// code points. For a value trimmed of surrounding white space, pass what was sent as `sent`:
    /// its characters are checked, so trimming never removes a control character unseen.
    public static func check(_ value: String, sent: String? = nil, at field: String, lengths: ClosedRange<Int>) -> [FieldError] {
        if let bad = (sent ?? value).unicodeScalars.first(where: { !isAllowed($0) }) {
            let hex = String(bad.value, radix: 16, uppercase: true)
            let code = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return [FieldError(field: field, message: "must not contain control or bidirectional-override characters (found U+\(code))",
                               code: "invalid_character")]
        }
        guard lengths.contains(value.unicodeScalars.count) else {
            let message = lengths.lowerBound == 0 ? "at most \(lengths.upperBound) characters"
                : "\(lengths.lowerBound) to \(lengths.upperBound) characters"
            return [FieldError(field: field, message: message, code: "invalid_length")]
        }
        return []
    }
}
