/// An axis-aligned rectangle given by its extreme coordinates.
public struct Rect: Sendable, Equatable, Hashable {
    /// Smallest x.
    public var minX: Double
    /// Smallest y.
    public var minY: Double
    /// Largest x.
    public var maxX: Double
    /// Largest y.
    public var maxY: Double

    /// Creates a rectangle from its extremes (callers keep `min <= max`).
    @inlinable
    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The empty rectangle at the origin, used as the bounds of an empty outline.
    public static let zero = Rect(minX: 0, minY: 0, maxX: 0, maxY: 0)

    /// `maxX - minX`.
    @inlinable public var width: Double { maxX - minX }
    /// `maxY - minY`.
    @inlinable public var height: Double { maxY - minY }

    /// Grows the rectangle to contain `p`.
    @inlinable
    public mutating func include(_ p: Point) {
        if p.x < minX { minX = p.x }
        if p.x > maxX { maxX = p.x }
        if p.y < minY { minY = p.y }
        if p.y > maxY { maxY = p.y }
    }

    /// The smallest rectangle containing both rectangles.
    @inlinable
    public func union(_ other: Rect) -> Rect {
        Rect(minX: Swift.min(minX, other.minX), minY: Swift.min(minY, other.minY),
             maxX: Swift.max(maxX, other.maxX), maxY: Swift.max(maxY, other.maxY))
    }

    /// The rectangle grown by `d` on every side (shrunk when `d` is negative).
    @inlinable
    public func expanded(by d: Double) -> Rect {
        Rect(minX: minX - d, minY: minY - d, maxX: maxX + d, maxY: maxY + d)
    }
}
