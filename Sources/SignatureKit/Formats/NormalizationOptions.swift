/// How inputs without a canvas (InkML, SVC2004) are mapped into canvas units.
///
/// The ink's bounding box is scaled uniformly by
/// `s = min(maxScale, (canvasWidth - 2·margin) / inkWidth, (maxCanvasHeight - 2·margin) / inkHeight)`
/// and centred in a canvas `canvasWidth` wide and
/// `max(minCanvasHeight, inkHeight·s + 2·margin)` high. Coordinates are rounded to 0.001 units so
/// the result is already in canonical form. With the defaults a typical signature lands in a
/// 600-unit-wide canvas; small ink is never enlarged (`maxScale` 1), so a dot stays a dot and
/// is rejected as `blank_signature`.
public struct NormalizationOptions: Sendable, Equatable {
    /// Canvas width in units. Default 600.
    public var canvasWidth: Double = 600
    /// Smallest canvas height. Default 200.
    public var minCanvasHeight: Double = 200
    /// Largest canvas height (tall ink is scaled down to fit). Default 600.
    public var maxCanvasHeight: Double = 600
    /// Space around the ink in canvas units. Default 20.
    public var margin: Double = 20
    /// Largest scale factor applied to source units. Default 1 (never enlarge).
    public var maxScale: Double = 1

    /// The documented defaults.
    public init() {}
}

struct RawPoint {
    var x: Double
    var y: Double
    var t: Double
    var pressure: Double?
}

enum Normalizer {
    @inline(__always)
    static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    static func normalize(_ strokes: [[RawPoint]], flipY: Bool, options o: NormalizationOptions) -> InkDocument {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for s in strokes {
            for p in s {
                minX = Swift.min(minX, p.x); maxX = Swift.max(maxX, p.x)
                minY = Swift.min(minY, p.y); maxY = Swift.max(maxY, p.y)
            }
        }
        guard minX.isFinite, maxX.isFinite, minY.isFinite, maxY.isFinite else {
            // No points (or non-finite values, which validation reports): pass through.
            return InkDocument(canvas: CanvasSize(width: o.canvasWidth, height: o.minCanvasHeight),
                               strokes: strokes.map { Stroke(points: $0.map { InkPoint(x: $0.x, y: $0.y, t: $0.t, pressure: $0.pressure) }) })
        }
        let bw = maxX - minX, bh = maxY - minY
        var s = o.maxScale
        if bw > 0 { s = Swift.min(s, (o.canvasWidth - 2 * o.margin) / bw) }
        if bh > 0 { s = Swift.min(s, (o.maxCanvasHeight - 2 * o.margin) / bh) }
        let width = o.canvasWidth
        let height = Swift.max(o.minCanvasHeight, (bh * s + 2 * o.margin).rounded(.up))
        let ox = (width - bw * s) / 2
        let oy = (height - bh * s) / 2
        var out: [Stroke] = []
        out.reserveCapacity(strokes.count)
        for stroke in strokes {
            var pts: [InkPoint] = []
            pts.reserveCapacity(stroke.count)
            for p in stroke {
                let x = (p.x - minX) * s + ox
                let y = flipY ? (maxY - p.y) * s + oy : (p.y - minY) * s + oy
                pts.append(InkPoint(x: round3(x), y: round3(y), t: round3(p.t), pressure: p.pressure.map { (($0 * 10000).rounded()) / 10000 }))
            }
            out.append(Stroke(points: pts))
        }
        return InkDocument(canvas: CanvasSize(width: width, height: height), strokes: out)
    }
}
