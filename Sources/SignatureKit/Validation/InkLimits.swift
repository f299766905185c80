/// Limits and tolerances applied when parsing and validating ink. All defaults are documented
/// in `docs/ink-format.md`; change them per call site when needed.
public struct InkLimits: Sendable, Equatable {
    /// Maximum input size in bytes. Default 8 MiB.
    public var maxInputBytes: Int = 8 << 20
    /// Maximum total number of points. Default 50,000.
    public var maxPoints: Int = 50_000
    /// Maximum number of strokes. Default 1,000.
    public var maxStrokes: Int = 1_000
    /// Maximum canvas width and height in canvas units. Default 10,000.
    public var maxCanvasDimension: Double = 10_000
    /// How far a point may lie outside the canvas, as a fraction of the canvas width (for x) or
    /// height (for y). Default 0.1 (10 %), so a 600×200 canvas accepts x in -60...660.
    public var outOfCanvasTolerance: Double = 0.1
    /// How many milliseconds time may go backwards between consecutive points (also across a
    /// pen lift) before `time_backwards`, measured against the latest time seen so far.
    /// Default 50 ms: SVC2004 recordings contain steps of -9, -15, -18 and -25 ms.
    public var backwardsTimeTolerance: Double = 50
    /// Maximum nesting depth of JSON arrays/objects or XML elements. Default 64.
    public var maxNestingDepth: Int = 64
    /// Fewest points a signature may have. Default 10.
    public var minPoints: Int = 10
    /// Smallest ink extent (the larger of ink width and height) as a fraction of the larger
    /// canvas dimension. Default 0.05 (30 units on a 600-unit-wide canvas).
    public var minInkExtentFraction: Double = 0.05
    /// When `false`, the `blank_signature` checks (``minPoints``, ``minInkExtentFraction`` and
    /// "no strokes") are skipped, e.g. for storing arbitrary ink. Default `true`.
    public var rejectBlank: Bool = true

    /// The documented defaults.
    public init() {}

    /// The documented defaults.
    public static let `default` = InkLimits()
}
