/// A validation or parse failure with a stable machine-readable ``code`` and a human message.
///
/// `description` gives one line suitable for a CLI's stderr or an HTTP problem detail, e.g.
/// `time_backwards (stroke 2, point 17): time goes back 35 ms (tolerance 20 ms)`.
public struct InkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable error codes. The raw values are part of the public contract (documented in
    /// `docs/ink-format.md`); never rename them.
    public enum Code: String, Sendable, Equatable, Hashable, CaseIterable {
        /// The input has no bytes (or only whitespace).
        case emptyInput = "empty_input"
        /// The input exceeds ``InkLimits/maxInputBytes``.
        case inputTooLarge = "input_too_large"
        /// The format could not be detected, or a `format` tag names another format.
        case unsupportedFormat = "unsupported_format"
        /// JSON syntax error.
        case invalidJSON = "invalid_json"
        /// XML syntax error (InkML input).
        case invalidXML = "invalid_xml"
        /// A `<!DOCTYPE` or `<!ENTITY` declaration was found; DTDs are never processed.
        case dtdForbidden = "dtd_forbidden"
        /// Well-formed XML that is not usable InkML (no `<ink>` root, no X/Y channel, bad trace).
        case invalidInkML = "invalid_inkml"
        /// Malformed SVC2004 text (bad header, wrong column count, count mismatch).
        case invalidSVC = "invalid_svc"
        /// Nesting deeper than ``InkLimits/maxNestingDepth``.
        case nestingTooDeep = "nesting_too_deep"
        /// A required member is absent.
        case missingField = "missing_field"
        /// A member with the same name appears twice.
        case duplicateField = "duplicate_field"
        /// A value has the wrong JSON type (e.g. a string where a number is expected).
        case wrongType = "wrong_type"
        /// A point does not have 3 or 4 elements (`[x, y, t]` or `[x, y, t, p]`).
        case invalidPoint = "invalid_point"
        /// A number overflows to infinity (or is otherwise not finite).
        case notFinite = "not_finite"
        /// Canvas width or height is zero or negative.
        case invalidCanvas = "invalid_canvas"
        /// Canvas width or height exceeds ``InkLimits/maxCanvasDimension``.
        case canvasTooLarge = "canvas_too_large"
        /// A point lies further outside the canvas than ``InkLimits/outOfCanvasTolerance`` allows.
        case outOfCanvas = "out_of_canvas"
        /// Time decreases by more than ``InkLimits/backwardsTimeTolerance``.
        case timeBackwards = "time_backwards"
        /// Pressure outside `0...1`.
        case pressureOutOfRange = "pressure_out_of_range"
        /// A stroke without points.
        case emptyStroke = "empty_stroke"
        /// More points than ``InkLimits/maxPoints``.
        case tooManyPoints = "too_many_points"
        /// More strokes than ``InkLimits/maxStrokes``.
        case tooManyStrokes = "too_many_strokes"
        /// No strokes, too few points, or ink too small against the canvas (a dot, a smudge).
        case blankSignature = "blank_signature"
    }

    /// The machine-readable code.
    public var code: Code
    /// A human-readable explanation naming what is wrong.
    public var message: String
    /// Zero-based stroke index, when the problem is in a stroke.
    public var stroke: Int?
    /// Zero-based point index within ``stroke``, when the problem is at a point.
    public var point: Int?
    /// Zero-based byte offset in the input, when known.
    public var offset: Int?
    /// One-based line number in the input (text formats), when known.
    public var line: Int?
    /// The JSON pointer of the member at fault (a repeated member name), when known.
    public var pointer: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, stroke: Int? = nil, point: Int? = nil,
                offset: Int? = nil, line: Int? = nil) {
        self.code = code
        self.message = message
        self.stroke = stroke
        self.point = point
        self.offset = offset
        self.line = line
    }

    /// One line: `code (location): message`.
    public var description: String {
        var loc: [String] = []
        if let stroke { loc.append("stroke \(stroke)") }
        if let point { loc.append("point \(point)") }
        if let line { loc.append("line \(line)") }
        if let offset { loc.append("byte \(offset)") }
        let where_ = loc.isEmpty ? "" : " (" + loc.joined(separator: ", ") + ")"
        return code.rawValue + where_ + ": " + message
    }
}
