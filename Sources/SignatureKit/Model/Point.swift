/// A 2-D point of output geometry (canvas units or output pixels, depending on context).
public struct Point: Sendable, Equatable, Hashable {
    /// Horizontal coordinate.
    public var x: Double
    /// Vertical coordinate (grows downwards).
    public var y: Double

    /// Creates a point.
    @inlinable
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The origin.
    public static let zero = Point(x: 0, y: 0)

    /// Euclidean distance to `other`.
    @inlinable
    public func distance(to other: Point) -> Double {
        let dx = other.x - x, dy = other.y - y
        return (dx * dx + dy * dy).squareRoot()
    }

    /// The midpoint between `self` and `other`.
    @inlinable
    public func midpoint(_ other: Point) -> Point {
        Point(x: (x + other.x) / 2, y: (y + other.y) / 2)
    }
}
