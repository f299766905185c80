/// The text of a search (`q`): matched, ignoring case, against the start of the reference and
/// anywhere in the recipient, the address and the signer's name.
///
/// The text is matched literally: in patterns `%`, `_` and `\` are escaped, so `100%` finds
/// "100%" and not every "100…" (the reference prefix is compared as a range, without a pattern).
/// It must hold at least ``minimumLength`` characters.
///
/// The trigram indexes (migrations 0021 and 0022) are cut from runs of three word characters
/// (letters and digits): a text without such a run (`%%%`, `---`, `😀😀😀`, `e s`, or a reference's
/// first letters, `ST-`) gives pg_trgm no trigram, or only a word-boundary one as common as a
/// letter, and its pattern would recheck every row of every band. Such a text matches the start of
/// the reference only (``matchesNames`` is false), which its own index answers in every band at once.
public struct DeliveryTextQuery: Sendable, Equatable {
    /// Fewest characters (Unicode scalars, after trimming surrounding spaces).
    public static let minimumLength = 3
    /// Most characters: longer text matches nothing a person would type, and costs more trigrams.
    public static let maximumLength = 100

    /// The text as given, trimmed.
    public let text: String

    /// True when the text has ``minimumLength`` letters or digits in a row, so the trigram indexes
    /// can narrow a search of the recipient, the address and the signer; otherwise it matches the
    /// start of the reference only.
    public let matchesNames: Bool

    /// The text, trimmed of surrounding spaces; `nil` when it is shorter than ``minimumLength``,
    /// longer than ``maximumLength``, or holds control characters.
    public init?(_ raw: String) {
        let trimmed = raw.unicodeScalars.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        let scalars = String.UnicodeScalarView(trimmed)
        guard (Self.minimumLength...Self.maximumLength).contains(scalars.count),
              !scalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        self.text = String(scalars)
        self.matchesNames = Self.longestWordRun(scalars) >= Self.minimumLength
    }

    /// The longest run of letters and digits: what pg_trgm (`iswalnum` under the cluster's
    /// C.UTF-8 ctype) keeps as a word and cuts into trigrams.
    static func longestWordRun(_ scalars: String.UnicodeScalarView) -> Int {
        var longest = 0
        var run = 0
        for scalar in scalars {
            let word = scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
            run = word ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
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
