/// What lies under the ink in rendered output.
public enum RenderBackground: String, Sendable, Equatable, CaseIterable {
    /// No background: PNG with alpha, SVG without a background rectangle (the default).
    case transparent
    /// Opaque white.
    case white
}
