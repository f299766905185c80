/// An anti-aliased path filler with exact-area coverage.
///
/// Technique (as in font-rs / stb_truetype 2 / FreeType's "smooth" rasteriser): every line
/// segment adds, per pixel cell it crosses, the signed area it leaves to its right and the
/// signed vertical extent ("cover") it carries; a prefix sum along each scanline then yields
/// the exact signed area of the filled region inside every pixel.
///
/// Fill rule: **non-zero**, resolved as `coverage = min(1, |accumulated winding area|)`.
/// That is exact wherever subpaths do not overlap inside a pixel, exact for pixels fully
/// inside any overlap (winding 2, 3, ... clamps to full), and the standard approximation
/// (same as FreeType and font-rs) for pixels where two overlapping edges cross the same pixel:
/// there the partial areas add before clamping, so coverage can be slightly over-estimated.
///
/// Curves are flattened to lines in pixel space with a guaranteed maximum deviation of
/// `tolerance` (0.1 px by default) using the second-derivative bound (Wang's formula).
/// Geometry outside the image is clipped: parts above/below/right are dropped, parts to the
/// left are projected onto x = 0 (which keeps their winding contribution exact); curves whose
/// control polygon lies entirely outside are not flattened at all.
///
/// Memory: one `Float` accumulator cell per pixel (+2 per row) and one flag per 16 cells,
/// allocated once in `init`; filling and resolving never allocate.
public struct Rasterizer: Sendable {
    /// Image width in pixels.
    public private(set) var width: Int
    /// Image height in pixels.
    public private(set) var height: Int
    /// Maximum distance, in pixels, between a curve and its flattened polyline.
    public var tolerance: Double = 0.1

    /// Largest accepted width or height.
    public static let maxDimension = 1 << 15

    private var stride: Int
    /// Blocks of `Cells.blockSize` cells per row in `dirty`.
    private var blocksPerRow: Int
    private var acc: [Float]
    /// One flag per block of cells: non-zero when some cell of the block may be non-zero.
    /// Resolving skips clean blocks (the winding is constant across them) and clearing
    /// zeroes only dirty ones.
    private var dirty: [UInt8]
    /// Rows `touched.lo ..< touched.hi` may hold non-zero cells (empty when lo >= hi).
    private var touched = RowRange()

    /// Creates a rasteriser for a `width` × `height` image; both must be in `1...maxDimension`.
    public init(width: Int, height: Int) {
        precondition(width > 0 && width <= Rasterizer.maxDimension, "Rasterizer width out of range")
        precondition(height > 0 && height <= Rasterizer.maxDimension, "Rasterizer height out of range")
        self.width = width
        self.height = height
        self.stride = width + 2
        self.blocksPerRow = (width + 2 + Cells.blockSize - 1) >> Cells.blockShift
        self.acc = [Float](repeating: 0, count: (width + 2) * height)
        self.dirty = [UInt8](repeating: 0, count: blocksPerRow * height)
    }

    /// Clears everything filled so far and changes the image size, reusing the buffers
    /// (they only grow). Cheaper than a new `Rasterizer`: no zeroing of untouched memory.
    public mutating func reset(width: Int, height: Int) {
        precondition(width > 0 && width <= Rasterizer.maxDimension, "Rasterizer width out of range")
        precondition(height > 0 && height <= Rasterizer.maxDimension, "Rasterizer height out of range")
        clear()  // every cell and flag is zero again
        if width == self.width && height == self.height { return }
        self.width = width
        self.height = height
        self.stride = width + 2
        self.blocksPerRow = (width + 2 + Cells.blockSize - 1) >> Cells.blockShift
        let cells = stride * height, flags = blocksPerRow * height
        if acc.count < cells { acc.append(contentsOf: repeatElement(0, count: cells - acc.count)) }
        if dirty.count < flags { dirty.append(contentsOf: repeatElement(0, count: flags - dirty.count)) }
    }

    /// Adds the filled interior of `path` (non-zero rule) to the accumulated coverage.
    ///
    /// Several paths filled in turn combine as one non-zero fill of all their subpaths.
    public mutating func fill(_ path: Path) {
        if path.verbs.isEmpty { return }
        let w = width, h = height, stride = stride, bpr = blocksPerRow
        let tol = Float(max(tolerance, 1e-4))
        acc.withUnsafeMutableBufferPointer { a in
            dirty.withUnsafeMutableBufferPointer { d in
                withUnsafeMutablePointer(to: &touched) { rows in
                    path.verbs.withUnsafeBufferPointer { verbs in
                        path.coords.withUnsafeBufferPointer { c in
                            let cells = Cells(
                                acc: a.baseAddress!, dirty: d.baseAddress!, rows: rows, blocksPerRow: bpr,
                                stride: stride, w: Float(w), h: Float(h))
                            cells.run(verbs: verbs, coords: c, tolerance: tol)
                        }
                    }
                }
            }
        }
    }

    /// The coverage of everything filled so far: `width * height` bytes, row-major,
    /// 0 = empty, 255 = fully covered.
    public func coverage() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height) { buf, count in
            resolve(into: buf.baseAddress!)
            count = width * height
        }
    }

    /// Writes the coverage into `out`, which must hold exactly `width * height` bytes
    /// (every byte is written). Lets a caller reuse its buffer.
    public func writeCoverage(into out: inout [UInt8]) {
        precondition(out.count == width * height, "coverage buffer has the wrong size")
        out.withUnsafeMutableBufferPointer { resolve(into: $0.baseAddress!) }
    }

    /// Prefix-sums every row into 8-bit coverage. Clean blocks are filled with the running
    /// winding (almost always 0) without reading their cells; dirty blocks are summed four
    /// cells at a time so the loop-carried dependency is one add per four pixels.
    private func resolve(into dst: UnsafeMutablePointer<UInt8>) {
        // Non-mutating: read through pointers that are never written when `clearing` is false.
        acc.withUnsafeBufferPointer { a in
            dirty.withUnsafeBufferPointer { d in
                Rasterizer.resolve(
                    into: dst, cells: UnsafeMutablePointer(mutating: a.baseAddress!),
                    flags: UnsafeMutablePointer(mutating: d.baseAddress!), clearing: false,
                    width: width, height: height, stride: stride, blocksPerRow: blocksPerRow, touched: touched)
            }
        }
    }

    /// The coverage (as ``coverage()``), clearing the accumulator in the same pass: cheaper
    /// than `coverage()` followed by `clear()` because every touched cell is read and
    /// zeroed while it is in cache.
    public mutating func takeCoverage() -> [UInt8] {
        let (w, h, stride, bpr, touched) = (width, height, stride, blocksPerRow, touched)
        let out = acc.withUnsafeMutableBufferPointer { a in
            dirty.withUnsafeMutableBufferPointer { d in
                [UInt8](unsafeUninitializedCapacity: w * h) { buf, count in
                    Rasterizer.resolve(
                        into: buf.baseAddress!, cells: a.baseAddress!, flags: d.baseAddress!, clearing: true,
                        width: w, height: h, stride: stride, blocksPerRow: bpr, touched: touched)
                    count = w * h
                }
            }
        }
        self.touched = RowRange()
        return out
    }

    @inline(__always)
    private static func resolve(
        into dst: UnsafeMutablePointer<UInt8>, cells src: UnsafeMutablePointer<Float>,
        flags: UnsafeMutablePointer<UInt8>, clearing: Bool,
        width w: Int, height: Int, stride: Int, blocksPerRow bpr: Int, touched: RowRange
    ) {
        do {
            do {
                let (tlo, thi) = (touched.lo, touched.hi)
                for y in 0..<height {
                    let orow = dst + y * w
                    if y < tlo || y >= thi {
                        orow.update(repeating: 0, count: w)
                        continue
                    }
                    let arow = src + y * stride
                    let frow = flags + y * bpr
                    var s: Float = 0
                    var b = 0
                    while b < bpr {
                        let x0 = b << Cells.blockShift
                        if x0 >= w {
                            // Cells past the image (x = w, w + 1) are never output, only cleared.
                            if clearing {
                                for e in b..<bpr where frow[e] != 0 {
                                    let xe = e << Cells.blockShift
                                    (arow + xe).update(repeating: 0, count: min(Cells.blockSize, stride - xe))
                                    frow[e] = 0
                                }
                            }
                            break
                        }
                        let x1 = min(x0 + Cells.blockSize, w)
                        if frow[b] == 0 {
                            // Merge a run of clean blocks into one fill.
                            var e = b + 1
                            while e < bpr && frow[e] == 0 && (e << Cells.blockShift) < w { e += 1 }
                            let xe = min(e << Cells.blockShift, w)
                            (orow + x0).update(repeating: Cells.byte(s), count: xe - x0)
                            b = e
                            continue
                        }
                        var x = x0
                        while x + 4 <= x1 {
                            let c0 = arow[x], c1 = arow[x + 1], c2 = arow[x + 2], c3 = arow[x + 3]
                            if (c0.bitPattern | c1.bitPattern | c2.bitPattern | c3.bitPattern) & 0x7FFF_FFFF == 0 {
                                // Four untouched cells: constant winding.
                                let v = UInt32(Cells.byte(s)) &* 0x0101_0101
                                UnsafeMutableRawPointer(orow + x).storeBytes(of: v, as: UInt32.self)
                                x += 4
                                continue
                            }
                            let p1 = c0 + c1
                            let p3 = p1 + (c2 + c3)
                            let s0 = s + c0, s1 = s + p1, s2 = s1 + c2, s3 = s + p3
                            orow[x] = Cells.byte(s0)
                            orow[x + 1] = Cells.byte(s1)
                            orow[x + 2] = Cells.byte(s2)
                            orow[x + 3] = Cells.byte(s3)
                            s = s3
                            x += 4
                        }
                        while x < x1 {
                            s += arow[x]
                            orow[x] = Cells.byte(s)
                            x += 1
                        }
                        if clearing {
                            (arow + x0).update(repeating: 0, count: min(Cells.blockSize, stride - x0))
                            frow[b] = 0
                        }
                        b += 1
                    }
                }
            }
        }
    }

    /// Forgets everything filled so far (clears only the touched cells).
    public mutating func clear() {
        if touched.lo >= touched.hi { return }
        let stride = stride, bpr = blocksPerRow
        let (lo, hi) = (touched.lo, touched.hi)
        acc.withUnsafeMutableBufferPointer { a in
            dirty.withUnsafeMutableBufferPointer { d in
                let cells = a.baseAddress!, flags = d.baseAddress!
                for y in lo..<hi {
                    let frow = flags + y * bpr
                    for b in 0..<bpr where frow[b] != 0 {
                        let x0 = b << Cells.blockShift
                        (cells + y * stride + x0).update(repeating: 0, count: min(Cells.blockSize, stride - x0))
                        frow[b] = 0
                    }
                }
            }
        }
        touched = RowRange()
    }
}

/// A half-open range of rows, grown as segments are added.
struct RowRange {
    var lo = Int.max
    var hi = Int.min
}

/// Raw view of the accumulation buffers used while filling.
struct Cells {
    let acc: UnsafeMutablePointer<Float>
    let dirty: UnsafeMutablePointer<UInt8>
    let rows: UnsafeMutablePointer<RowRange>
    let blocksPerRow: Int
    let stride: Int
    let w: Float
    let h: Float

    static let blockShift = 4
    static let blockSize = 1 << blockShift

    /// Largest number of line segments one curve is flattened into.
    static let maxCurveSegments: Float = 2048

    @inline(__always)
    static func byte(_ s: Float) -> UInt8 {
        let v = Swift.min(Swift.abs(s), 1) * 255 + 0.5
        return UInt8(v)
    }

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
            span(ax, ay, bx, by, dir)
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
                span(min(max(xa, 0), w), yPrev, min(max(xb, 0), w), yN, dir)
            }
            yPrev = yN
        }
        piece(c1)
        piece(c2)
        piece(yb)
    }

    /// Accumulates a segment known to lie in [0, w] × [0, h] with y0 < y1.
    @inline(__always)
    func span(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ dir: Float) {
        let dxdy = (x1 - x0) / (y1 - y0)
        var x = x0
        let yStart = Int(y0)
        let yEnd = Int(y1.rounded(.up))
        if yStart < rows.pointee.lo { rows.pointee.lo = yStart }
        if yEnd > rows.pointee.hi { rows.pointee.hi = yEnd }
        var y = yStart
        while y < yEnd {
            let fy = Float(y)
            let dy = min(fy + 1, y1) - max(fy, y0)
            let xnext = y == yEnd - 1 ? x1 : min(max(x + dxdy * dy, 0), w)
            let d = dy * dir
            let row = acc + y * stride
            let xa = min(x, xnext), xb = max(x, xnext)
            let xaf = xa.rounded(.down)
            let xai = Int(xaf)
            let xbc = xb.rounded(.up)
            let xbi = Int(xbc)
            if xbi <= xai + 1 {
                // The segment stays within one pixel column on this row.
                let xmf = 0.5 * (x + xnext) - xaf
                row[xai] += d - d * xmf
                row[xai + 1] += d * xmf
            } else {
                let s = 1 / (xb - xa)
                let x0f = xa - xaf
                let a0 = 0.5 * s * (1 - x0f) * (1 - x0f)
                let x1f = xb - xbc + 1
                let am = 0.5 * s * x1f * x1f
                row[xai] += d * a0
                if xbi == xai + 2 {
                    row[xai + 1] += d * (1 - a0 - am)
                } else {
                    let a1 = s * (1.5 - x0f)
                    row[xai + 1] += d * (a1 - a0)
                    let ds = d * s
                    var xi = xai + 2
                    while xi < xbi - 1 {
                        row[xi] += ds
                        xi += 1
                    }
                    let a2 = a1 + Float(xbi - xai - 3) * s
                    row[xbi - 1] += d * (1 - a2 - am)
                }
                row[xbi] += d * am
            }
            let flags = dirty + y * blocksPerRow
            let b0 = xai >> Cells.blockShift, b1 = (xai + 1) >> Cells.blockShift
            flags[b0] = 1
            flags[b1] = 1
            if xbi > xai + 1 {
                var b = b1 + 1
                let bEnd = xbi >> Cells.blockShift
                while b <= bEnd {
                    flags[b] = 1
                    b += 1
                }
            }
            x = xnext
            y += 1
        }
    }
}
