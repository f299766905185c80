/// One pen-down stroke: the points between touching the surface and lifting the pen.
public struct Stroke: Sendable, Equatable {
    /// The sampled points in time order.
    public var points: [InkPoint]

    /// Creates a stroke from its points.
    public init(points: [InkPoint]) {
        self.points = points
    }
}
