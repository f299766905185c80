/// Render options that cannot give an image of this ink, with a stable machine-readable
/// ``code`` and a human message, in the same style as SignatureKit's `InkError` (the HTTP API
/// reports both the same way, as a 422 problem with the code).
///
/// `description` gives one line, e.g. `invalid_layout: scale must be a positive number, got 0.0`.
public struct RenderOptionsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable error codes. The raw values are part of the public contract (documented in
    /// `docs/ink-format.md`); never rename them.
    public enum Code: String, Sendable, Equatable, Hashable, CaseIterable {
        /// A layout would exceed the maximum output size.
        case outputTooLarge = "output_too_large"
        /// Layout options are not usable (non-positive or non-finite size/scale/margin).
        case invalidLayout = "invalid_layout"
        /// A colour string is not `#RRGGBB`.
        case invalidColor = "invalid_color"
    }

    /// The machine-readable code.
    public var code: Code
    /// A human-readable explanation naming what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// One line: `code: message`.
    public var description: String { code.rawValue + ": " + message }
}
