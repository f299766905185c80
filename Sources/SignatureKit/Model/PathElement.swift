/// One drawing command of an ``Outline``. Coordinates are absolute.
public enum PathElement: Sendable, Equatable {
    /// Starts a new subpath at the point.
    case move(Point)
    /// Straight line to the point.
    case line(Point)
    /// Quadratic Bézier to `to` with one control point.
    case quad(control: Point, to: Point)
    /// Cubic Bézier to `to` with two control points.
    case cubic(control1: Point, control2: Point, to: Point)
    /// Closes the current subpath with a straight line back to its start.
    case close

    /// The element with every point mapped through `transform`.
    @inlinable
    public func transformed(by transform: Transform) -> PathElement {
        switch self {
        case .move(let p): return .move(transform.apply(p))
        case .line(let p): return .line(transform.apply(p))
        case .quad(let c, let p): return .quad(control: transform.apply(c), to: transform.apply(p))
        case .cubic(let c1, let c2, let p):
            return .cubic(control1: transform.apply(c1), control2: transform.apply(c2), to: transform.apply(p))
        case .close: return .close
        }
    }
}
