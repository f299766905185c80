/// A parsed, format-independent signature: a canvas and the pen-down strokes drawn on it.
///
/// Coordinates are canvas units with the origin at the top-left and y growing downwards.
/// Times are milliseconds; they are only required to be non-decreasing within a small jitter
/// (see ``InkLimits/backwardsTimeTolerance``).
public struct InkDocument: Sendable, Equatable {
    /// The drawing surface the coordinates refer to.
    public var canvas: CanvasSize
    /// Pen-down strokes in drawing order.
    public var strokes: [Stroke]

    /// Creates a document from a canvas and strokes. No validation happens here; use
    /// ``InkValidator/validate(_:limits:)`` (the parsers do so automatically).
    public init(canvas: CanvasSize, strokes: [Stroke]) {
        self.canvas = canvas
        self.strokes = strokes
    }

    /// Total number of points over all strokes.
    public var pointCount: Int {
        var n = 0
        for s in strokes { n += s.points.count }
        return n
    }

    /// The bounding box of all point positions, or `nil` when there are no points.
    public var inkBounds: Rect? {
        var r: Rect? = nil
        for s in strokes {
            for p in s.points {
                if var b = r {
                    b.include(Point(x: p.x, y: p.y))
                    r = b
                } else {
                    r = Rect(minX: p.x, minY: p.y, maxX: p.x, maxY: p.y)
                }
            }
        }
        return r
    }
}
