/// Flattens a path into clipped line segments appended to a ``SegmentStore``.
struct Flattener {
    let store: SegmentStore
    let w: Float
    let h: Float

    func run(verbs: UnsafeBufferPointer<Path.Verb>, coords c: UnsafeBufferPointer<Float>, tolerance tol: Float) {
        var sx: Float = 0, sy: Float = 0, cx: Float = 0, cy: Float = 0
        var i = 0
        for verb in verbs {
            switch verb {
            case .move:
                line(cx, cy, sx, sy)
                sx = c[i]; sy = c[i + 1]; i += 2
                cx = sx; cy = sy
            case .line:
                let x = c[i], y = c[i + 1]; i += 2
                line(cx, cy, x, y)
                cx = x; cy = y
            case .quad:
                let x1 = c[i], y1 = c[i + 1], x2 = c[i + 2], y2 = c[i + 3]; i += 4
                quad(cx, cy, x1, y1, x2, y2, tol)
                cx = x2; cy = y2
            case .cubic:
                let x1 = c[i], y1 = c[i + 1], x2 = c[i + 2], y2 = c[i + 3], x3 = c[i + 4], y3 = c[i + 5]
                i += 6
                cubic(cx, cy, x1, y1, x2, y2, x3, y3, tol)
                cx = x3; cy = y3
            case .close:
                line(cx, cy, sx, sy)
                cx = sx; cy = sy
            }
        }
        line(cx, cy, sx, sy)
    }

    /// Whether a curve with these control-point bounds can be replaced by its chord:
    /// entirely above, below or right of the image contributes nothing; entirely left
    /// contributes only its net vertical extent at x = 0, which the chord reproduces exactly.
    @inline(__always)
    func outside(minX: Float, maxX: Float, minY: Float, maxY: Float) -> Bool {
        maxY <= 0 || minY >= h || minX >= w || maxX <= 0
    }

    @inline(__always)
    func quad(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ x2: Float, _ y2: Float, _ tol: Float) {
        if outside(minX: min(x0, x1, x2), maxX: max(x0, x1, x2), minY: min(y0, y1, y2), maxY: max(y0, y1, y2)) {
            line(x0, y0, x2, y2)
            return
        }
        // B'' = 2 (p0 - 2 p1 + p2); chord error over a parameter step 1/n <= |B''| / (8 n^2).
        let ddx = x0 - 2 * x1 + x2, ddy = y0 - 2 * y1 + y2
        let dd = (ddx * ddx + ddy * ddy).squareRoot()
        let n = min(max((dd / (4 * tol)).squareRoot().rounded(.up), 1), Cells.maxCurveSegments)
        if n <= 1 {
            line(x0, y0, x2, y2)
            return
        }
        let count = Int(n)
        let dt = 1 / n
        var px = x0, py = y0
        for k in 1..<count {
            let t = Float(k) * dt, u = 1 - t
            let a = u * u, b = 2 * u * t, cc = t * t
            let x = a * x0 + b * x1 + cc * x2
            let y = a * y0 + b * y1 + cc * y2
            line(px, py, x, y)
            px = x; py = y
        }
        line(px, py, x2, y2)
    }

    @inline(__always)
    func cubic(
        _ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float,
        _ x2: Float, _ y2: Float, _ x3: Float, _ y3: Float, _ tol: Float
    ) {
        if outside(
            minX: min(x0, x1, x2, x3), maxX: max(x0, x1, x2, x3),
            minY: min(y0, y1, y2, y3), maxY: max(y0, y1, y2, y3))
        {
            line(x0, y0, x3, y3)
            return
        }
        // |B''| <= 6 max(|p0 - 2p1 + p2|, |p1 - 2p2 + p3|); error <= max|B''| / (8 n^2).
        let ax = x0 - 2 * x1 + x2, ay = y0 - 2 * y1 + y2
        let bx = x1 - 2 * x2 + x3, by = y1 - 2 * y2 + y3
        let m = max(ax * ax + ay * ay, bx * bx + by * by).squareRoot()
        let n = min(max((0.75 * m / tol).squareRoot().rounded(.up), 1), Cells.maxCurveSegments)
        if n <= 1 {
            line(x0, y0, x3, y3)
            return
        }
        let count = Int(n)
        let dt = 1 / n
        var px = x0, py = y0
        for k in 1..<count {
            let t = Float(k) * dt, u = 1 - t
            let a = u * u * u, b = 3 * u * u * t, cc = 3 * u * t * t, d = t * t * t
            let x = a * x0 + b * x1 + cc * x2 + d * x3
            let y = a * y0 + b * y1 + cc * y2 + d * y3
            line(px, py, x, y)
            px = x; py = y
        }
        line(px, py, x3, y3)
    }

    /// Adds one line segment, clipping it against the image.
    @inline(__always)
    func line(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float) {
        if y0 == y1 { return }
        var ax = x0, ay = y0, bx = x1, by = y1
        var dir: Float = 1
        if ay > by {
            swap(&ax, &bx); swap(&ay, &by)
            dir = -1
        }
        if by <= 0 || ay >= h { return }
        if ax >= w && bx >= w { return }
        if ay >= 0 && by <= h && ax >= 0 && bx >= 0 && ax <= w && bx <= w {
            store.append(ax, ay, bx, by, dir)
            return
        }
        clipped(ax, ay, bx, by, dir)
    }

    /// The slow path of `line`: splits at y = 0, y = h, x = 0 and x = w.
    func clipped(_ ax: Float, _ ay: Float, _ bx: Float, _ by: Float, _ dir: Float) {
        let dxdy = (bx - ax) / (by - ay)
        let ya = max(ay, 0), yb = min(by, h)
        if ya >= yb { return }
        // Breakpoints along y where the segment crosses x = 0 or x = w.
        var c1 = yb, c2 = yb
        if ax != bx {
            let dydx = (by - ay) / (bx - ax)
            if min(ax, bx) < 0 && max(ax, bx) > 0 {
                c1 = ay + (0 - ax) * dydx
            }
            if min(ax, bx) < w && max(ax, bx) > w {
                c2 = ay + (w - ax) * dydx
            }
        }
        if c1 > c2 { swap(&c1, &c2) }
        var yPrev = ya
        @inline(__always) func piece(_ yNext: Float) {
            let yN = min(yNext, yb)
            if yN <= yPrev { return }
            let xa = ax + (yPrev - ay) * dxdy
            let xb = ax + (yN - ay) * dxdy
            // Pieces right of the image contribute nothing to visible pixels.
            if (xa + xb) * 0.5 < w {
                store.append(min(max(xa, 0), w), yPrev, min(max(xb, 0), w), yN, dir)
            }
            yPrev = yN
        }
        piece(c1)
        piece(c2)
        piece(yb)
    }
}
