/// A point with a stroke weight (the full width of the stroke there).
struct WeightedPoint: Sendable, Equatable {
    var point: Point
    var weight: Double
    var pressure: Double?
}

/// The shapes of UberSignature's `UIBezierPath+UBWeightedPoint` (Objective-C version).
enum WeightedShapes {
    /// Bézier circle constant: 4/3·(√2 − 1).
    static let kappa = 0.5522847498307936

    struct Bar {
        var start: Point
        var end: Point
    }

    /// UberSignature's `_linePerpendicularToLine:withMiddlePoint:length:`: a bar of length
    /// `length` centred on `middle`, perpendicular to `from -> to`. Degenerates to the middle
    /// point when the length is 0 or the direction is zero.
    @inline(__always)
    static func perpendicular(from: Point, to: Point, middle: Point, length: Double) -> Bar {
        var rx = to.x - from.x
        var ry = to.y - from.y
        if length == 0 || (rx == 0 && ry == 0) { return Bar(start: middle, end: middle) }
        let modifier = (length / 2) / (rx * rx + ry * ry).squareRoot()
        rx *= modifier
        ry *= modifier
        return Bar(start: Point(x: ry + middle.x, y: -rx + middle.y),
                   end: Point(x: -ry + middle.x, y: rx + middle.y))
    }

    /// Bars at A and at B for the segment A -> B, each with its own point's weight.
    @inline(__always)
    static func bars(_ a: WeightedPoint, _ b: WeightedPoint) -> (Bar, Bar) {
        (perpendicular(from: a.point, to: b.point, middle: a.point, length: a.weight),
         perpendicular(from: a.point, to: b.point, middle: b.point, length: b.weight))
    }

    @inline(__always)
    static func average(_ a: Bar, _ b: Bar) -> Bar {
        Bar(start: a.start.midpoint(b.start), end: a.end.midpoint(b.end))
    }

    /// One point: a circle of radius = weight, as four cubic arcs, angle increasing
    /// (clockwise on a y-down screen, like `addArcWithCenter:...clockwise:YES`).
    static func dot(_ a: WeightedPoint, into out: inout [PathElement]) {
        let c = a.point, r = a.weight, k = kappa * a.weight
        out.append(.move(Point(x: c.x + r, y: c.y)))
        out.append(.cubic(control1: Point(x: c.x + r, y: c.y + k), control2: Point(x: c.x + k, y: c.y + r),
                          to: Point(x: c.x, y: c.y + r)))
        out.append(.cubic(control1: Point(x: c.x - k, y: c.y + r), control2: Point(x: c.x - r, y: c.y + k),
                          to: Point(x: c.x - r, y: c.y)))
        out.append(.cubic(control1: Point(x: c.x - r, y: c.y - k), control2: Point(x: c.x - k, y: c.y - r),
                          to: Point(x: c.x, y: c.y - r)))
        out.append(.cubic(control1: Point(x: c.x + k, y: c.y - r), control2: Point(x: c.x + r, y: c.y - k),
                          to: Point(x: c.x + r, y: c.y)))
        out.append(.close)
    }

    /// Two points: the Objective-C quadrilateral A.start, B.start, B.end, A.end.
    static func line(_ a: WeightedPoint, _ b: WeightedPoint, into out: inout [PathElement]) {
        let (la, lb) = bars(a, b)
        out.append(.move(la.start))
        out.append(.line(lb.start))
        out.append(.line(lb.end))
        out.append(.line(la.end))
        out.append(.close)
    }

    /// Three points: both sides as quadratics with the averaged bar at B as control.
    static func quad(_ a: WeightedPoint, _ b: WeightedPoint, _ c: WeightedPoint, into out: inout [PathElement]) {
        let (abA, abB) = bars(a, b)
        let (bcB, bcC) = bars(b, c)
        let lineB = average(abB, bcB)
        out.append(.move(abA.start))
        out.append(.quad(control: lineB.start, to: bcC.start))
        out.append(.line(bcC.end))
        out.append(.quad(control: lineB.end, to: abA.end))
        out.append(.close)
    }

    /// Four points: cubic A.start -> D.start (controls B.start, C.start), line to D.end, cubic
    /// back to A.end (controls C.end, B.end), close.
    static func cubic(_ a: WeightedPoint, _ b: WeightedPoint, _ c: WeightedPoint, _ d: WeightedPoint,
                      into out: inout [PathElement]) {
        let (abA, abB) = bars(a, b)
        let (bcB, bcC) = bars(b, c)
        let (cdC, cdD) = bars(c, d)
        let lineB = average(abB, bcB)
        let lineC = average(bcC, cdC)
        out.append(.move(abA.start))
        out.append(.cubic(control1: lineB.start, control2: lineC.start, to: cdD.start))
        out.append(.line(cdD.end))
        out.append(.cubic(control1: lineC.end, control2: lineB.end, to: abA.end))
        out.append(.close)
    }
}
