/// A vector path in pixel coordinates (origin top-left, y down), built from
/// straight lines and quadratic/cubic Bézier curves.
///
/// Coordinates are stored as `Float`: the rasteriser works in single precision,
/// which is exact to well under 1/1000 px for images up to 16 384 px wide.
/// Subpaths that are not explicitly closed are closed implicitly when filled.
public struct Path: Sendable, Equatable {
    /// The kind of one path element.
    public enum Verb: UInt8, Sendable {
        case move, line, quad, cubic, close
    }

    /// One verb per element.
    public private(set) var verbs: [Verb] = []
    /// Flat list of coordinates (x, y, x, y, ...): move/line use 2, quad 4, cubic 6, close 0.
    public private(set) var coords: [Float] = []

    public init() {}

    /// Largest coordinate magnitude kept; anything beyond (and NaN/infinity) is
    /// clamped so the rasteriser never sees a non-finite number.
    public static let coordinateLimit: Float = 1_000_000

    @inline(__always)
    static func sanitize(_ v: Double) -> Float {
        let f = Float(v)
        if f.isNaN { return 0 }
        return Swift.max(-coordinateLimit, Swift.min(coordinateLimit, f))
    }

    /// Whether the path has no elements.
    public var isEmpty: Bool { verbs.isEmpty }

    /// Reserves room for about `elements` elements of average size.
    public mutating func reserveCapacity(_ elements: Int) {
        verbs.reserveCapacity(elements)
        coords.reserveCapacity(elements * 6)
    }

    /// Empties the path, keeping its storage for reuse.
    public mutating func removeAll() {
        verbs.removeAll(keepingCapacity: true)
        coords.removeAll(keepingCapacity: true)
    }

    /// Starts a new subpath at (x, y).
    public mutating func move(_ x: Double, _ y: Double) {
        verbs.append(.move)
        coords.append(Path.sanitize(x)); coords.append(Path.sanitize(y))
    }

    /// A straight line to (x, y).
    public mutating func line(_ x: Double, _ y: Double) {
        verbs.append(.line)
        coords.append(Path.sanitize(x)); coords.append(Path.sanitize(y))
    }

    /// A quadratic Bézier curve with control point (cx, cy) ending at (x, y).
    public mutating func quad(_ cx: Double, _ cy: Double, _ x: Double, _ y: Double) {
        verbs.append(.quad)
        coords.append(Path.sanitize(cx)); coords.append(Path.sanitize(cy))
        coords.append(Path.sanitize(x)); coords.append(Path.sanitize(y))
    }

    /// A cubic Bézier curve with control points (c1x, c1y), (c2x, c2y) ending at (x, y).
    public mutating func cubic(
        _ c1x: Double, _ c1y: Double, _ c2x: Double, _ c2y: Double, _ x: Double, _ y: Double
    ) {
        verbs.append(.cubic)
        coords.append(Path.sanitize(c1x)); coords.append(Path.sanitize(c1y))
        coords.append(Path.sanitize(c2x)); coords.append(Path.sanitize(c2y))
        coords.append(Path.sanitize(x)); coords.append(Path.sanitize(y))
    }

    /// Closes the current subpath with a straight line back to its start.
    public mutating func close() {
        verbs.append(.close)
    }

    /// Appends an axis-aligned rectangle as a closed subpath.
    public mutating func rect(x: Double, y: Double, width: Double, height: Double) {
        move(x, y)
        line(x + width, y)
        line(x + width, y + height)
        line(x, y + height)
        close()
    }
}
