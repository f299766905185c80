/// A uniform scale followed by a translation: `p' = p * scale + (tx, ty)`.
///
/// This is all ``Layout`` needs to map canvas units to output pixels.
public struct Transform: Sendable, Equatable, Hashable {
    /// Uniform scale factor.
    public var scale: Double
    /// Horizontal translation applied after scaling.
    public var tx: Double
    /// Vertical translation applied after scaling.
    public var ty: Double

    /// Creates a transform.
    @inlinable
    public init(scale: Double, tx: Double = 0, ty: Double = 0) {
        self.scale = scale
        self.tx = tx
        self.ty = ty
    }

    /// The identity transform.
    public static let identity = Transform(scale: 1)

    /// Maps a point.
    @inlinable
    public func apply(_ p: Point) -> Point {
        Point(x: p.x * scale + tx, y: p.y * scale + ty)
    }
}
