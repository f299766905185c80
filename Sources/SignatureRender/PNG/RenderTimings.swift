/// How long the two halves of a PNG render took (for metrics).
public struct RenderTimings: Sendable, Equatable {
    /// Reconstruction, layout and rasterisation.
    public var render: Duration
    /// PNG encoding.
    public var encode: Duration

    /// Creates timings (zero by default).
    public init(render: Duration = .zero, encode: Duration = .zero) {
        self.render = render
        self.encode = encode
    }
}
