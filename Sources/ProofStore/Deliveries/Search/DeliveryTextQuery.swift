/// The text of a search (`q`): matched, ignoring case, against the start of the reference and
/// anywhere in the recipient, the address and the signer's name.
///
/// The text is matched literally: in patterns `%`, `_` and `\` are escaped, so `100%` finds
/// "100%" and not every "100…" (the reference prefix is compared as a range, without a pattern). It must hold at least ``minimumLength`` characters because the trigram indexes
/// (migrations 0021 and 0022) are built from runs of three: a shorter text cannot narrow an index scan and
/// would read every row.
public struct DeliveryTextQuery: Sendable, Equatable {
    /// Fewest characters (Unicode scalars, after trimming surrounding spaces).
    public static let minimumLength = 3
    /// Most characters: longer text matches nothing a person would type, and costs more trigrams.
    public static let maximumLength = 100

    /// The text as given, trimmed.
    public let text: String

    /// The text, trimmed of surrounding spaces; `nil` when it is shorter than ``minimumLength``,
    /// longer than ``maximumLength``, or holds control characters.
    public init?(_ raw: String) {
        let trimmed = raw.unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        let scalars = String.UnicodeScalarView(trimmed)
        guard (Self.minimumLength...Self.maximumLength).contains(scalars.count),
              !scalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        self.text = String(scalars)
    }

    /// `ILIKE` pattern for "contains the text".
    var containsPattern: String { "%" + escaped + "%" }

    /// The text with LIKE's metacharacters escaped by `\` (LIKE's default escape character).
    private var escaped: String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
