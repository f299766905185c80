/// UberSignature's smoothed weighted-Bézier reconstruction, point by point.
///
/// Feed points with ``add(_:)``; each call reports the segment it finalised (if any) and the
/// temporary shape that currently ends the stroke. ``endStroke()`` finalises the pending shape
/// as it is. Concatenating every finalised segment gives exactly the geometry of
/// ``outline(for:options:)``.
///
/// The algorithm (faithful to UberSignature's Objective-C `UBSignatureBezierProvider`):
/// - a point closer than ``ReconstructionOptions/minDistance`` (2) to the previous accepted
///   point is skipped;
/// - the first point of a stroke has weight ``ReconstructionOptions/dotWeight`` (3); later
///   points `max(0, 50 − d)·0.1 + 2` with `d` the distance to the previous accepted point;
/// - 1 point: circle of radius = weight; 2: quadrilateral; 3: quadratics; 4: cubic;
/// - when a 5th point arrives, point 4 is replaced by the midpoint of points 3 and 5 (weight
///   from the distance point 3 -> midpoint), the cubic is finalised, and a new segment starts
///   at that midpoint, followed by the new point (weighted by its distance to the replaced
///   original point 4, as in the original).
public struct SignatureReconstructor: Sendable {
    /// Stable identifier of the geometry this type produces. Change it whenever the output for
    /// the same input and options could change.
    public static let algorithmVersion = "ubersignature-weighted-bezier/1"

    /// What one ``add(_:)`` call produced.
    public struct Update: Sendable, Equatable {
        /// `false` when the point was skipped (closer than the minimum distance).
        public var accepted: Bool
        /// A closed subpath finalised by this point (only when a segment was completed).
        public var finalized: [PathElement]?
        /// The temporary closed subpath for the points not yet finalised (dot, line, quad or
        /// cubic), which ``endStroke()`` would finalise now.
        public var temporary: [PathElement]
    }

    /// The reconstruction parameters.
    public let options: ReconstructionOptions

    var p0 = WeightedPoint(point: .zero, weight: 0)
    var p1 = WeightedPoint(point: .zero, weight: 0)
    var p2 = WeightedPoint(point: .zero, weight: 0)
    var p3 = WeightedPoint(point: .zero, weight: 0)
    /// UberSignature's `nextPointIndex`: how many of p0...p3 are in use (0 = no stroke open).
    var count = 0

    /// Creates a reconstructor with no open stroke.
    public init(options: ReconstructionOptions = ReconstructionOptions()) {
        self.options = options
    }

    /// `true` while a stroke is open (at least one point since the last ``endStroke()``).
    public var isStrokeOpen: Bool { count > 0 }

    // MARK: Weights

    /// UberSignature's weight for a segment of length `d`: `max(0, 50 − d)·0.1 + 2`.
    @inlinable
    public static func weight(forDistance d: Double) -> Double {
        Swift.max(0, 50 - d) * 0.1 + 2
    }

    @inline(__always)
    func pressureFactor(_ p: Double?) -> Double {
        guard options.pressureScalesWidth else { return 1 }
        let m = options.minPressureScale
        return m + (1 - m) * Swift.min(Swift.max(p ?? 1, 0), 1)
    }

    // MARK: Core state machine

    /// Outcome of feeding one point to the core.
    enum Step {
        case skipped
        /// Accepted; if `finalized` is set, that cubic (the 4 weighted points) was completed.
        case accepted(finalized: (WeightedPoint, WeightedPoint, WeightedPoint, WeightedPoint)?)
    }

    @inline(__always)
    func point(at i: Int) -> WeightedPoint {
        switch i {
        case 0: return p0
        case 1: return p1
        case 2: return p2
        default: return p3
        }
    }

    @inline(__always)
    mutating func set(_ w: WeightedPoint, at i: Int) {
        switch i {
        case 0: p0 = w
        case 1: p1 = w
        case 2: p2 = w
        default: p3 = w
        }
    }

    @inline(__always)
    mutating func step(_ pt: Point, pressure: Double?) -> Step {
        if count == 0 {
            p0 = WeightedPoint(point: pt, weight: options.dotWeight * pressureFactor(pressure), pressure: pressure)
            count = 1
            return .accepted(finalized: nil)
        }
        let previous = point(at: count - 1).point
        if previous.distance(to: pt) < options.minDistance { return .skipped }
        var done: (WeightedPoint, WeightedPoint, WeightedPoint, WeightedPoint)? = nil
        if count > 3 {
            // Join: replace p3 by the midpoint of p2 and the new point, finalise, restart there.
            let mid = p2.point.midpoint(pt)
            let midPressure: Double? = {
                guard let a = p2.pressure, let b = pressure else { return p2.pressure ?? pressure }
                return (a + b) / 2
            }()
            p3 = WeightedPoint(point: mid,
                               weight: SignatureReconstructor.weight(forDistance: p2.point.distance(to: mid)) * pressureFactor(midPressure),
                               pressure: midPressure)
            done = (p0, p1, p2, p3)
            p0 = p3
            count = 1
        }
        let w = SignatureReconstructor.weight(forDistance: previous.distance(to: pt)) * pressureFactor(pressure)
        set(WeightedPoint(point: pt, weight: w, pressure: pressure), at: count)
        count += 1
        return .accepted(finalized: done)
    }

    /// Appends the shape for the points currently held (nothing when no stroke is open).
    func emitPending(into out: inout [PathElement]) {
        switch count {
        case 1: WeightedShapes.dot(p0, into: &out)
        case 2: WeightedShapes.line(p0, p1, into: &out)
        case 3: WeightedShapes.quad(p0, p1, p2, into: &out)
        case 4: WeightedShapes.cubic(p0, p1, p2, p3, into: &out)
        default: break
        }
    }

    // MARK: Incremental API

    /// Adds a point to the open stroke (opening one if needed).
    public mutating func add(_ point: InkPoint) -> Update {
        add(Point(x: point.x, y: point.y), pressure: point.pressure)
    }

    /// Adds a position (and optional pressure) to the open stroke (opening one if needed).
    public mutating func add(_ point: Point, pressure: Double? = nil) -> Update {
        switch step(point, pressure: pressure) {
        case .skipped:
            return Update(accepted: false, finalized: nil, temporary: temporary)
        case .accepted(let done):
            var finalized: [PathElement]? = nil
            if let (a, b, c, d) = done {
                var out: [PathElement] = []
                out.reserveCapacity(5)
                WeightedShapes.cubic(a, b, c, d, into: &out)
                finalized = out
            }
            return Update(accepted: true, finalized: finalized, temporary: temporary)
        }
    }

    /// The temporary shape for the points not yet finalised (empty when no stroke is open).
    public var temporary: [PathElement] {
        var out: [PathElement] = []
        emitPending(into: &out)
        return out
    }

    /// Ends the open stroke, returning the pending shape finalised as it is (`nil` when no
    /// stroke was open).
    public mutating func endStroke() -> [PathElement]? {
        guard count > 0 else { return nil }
        var out: [PathElement] = []
        emitPending(into: &out)
        count = 0
        return out
    }

    // MARK: Batch API

    /// Reconstructs a whole document: every stroke, finalised, as one outline in canvas units.
    public static func outline(for document: InkDocument,
                               options: ReconstructionOptions = ReconstructionOptions()) -> Outline {
        var r = SignatureReconstructor(options: options)
        var out: [PathElement] = []
        out.reserveCapacity(document.pointCount * 2 + document.strokes.count * 6)
        for stroke in document.strokes {
            for p in stroke.points {
                if case .accepted(let done?) = r.step(Point(x: p.x, y: p.y), pressure: p.pressure) {
                    WeightedShapes.cubic(done.0, done.1, done.2, done.3, into: &out)
                }
            }
            r.emitPending(into: &out)
            r.count = 0
        }
        return Outline(elements: out)
    }
}

extension InkDocument {
    /// The reconstructed outline in canvas units (see ``SignatureReconstructor``).
    public func outline(options: ReconstructionOptions = ReconstructionOptions()) -> Outline {
        SignatureReconstructor.outline(for: self, options: options)
    }
}
