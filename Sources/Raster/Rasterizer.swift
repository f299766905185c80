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
/// **Bands.** `fill` only flattens and clips: it stores line segments (20 bytes each). Resolving
/// (``coverage()``, ``takeCoverage()``, ``takeRows(_:)``) walks the image in bands of
/// ``bandHeight`` rows: the segments crossing a band are accumulated into one band-sized cell
/// buffer (16 rows × (width + 2) floats, 77 KB at 1200 px wide, so it stays in the core's cache),
/// the band is prefix-summed into 8-bit rows and its cells are cleared again. Rows without ink are
/// never summed; ``takeRows(_:)`` hands them out as one shared zero row. A whole-image float
/// accumulator (4 bytes per pixel, mostly cache misses) is never needed.
///
/// Memory: the segments, plus per band `bandHeight × (width + 2)` floats, one flag per 16 cells
/// and `bandHeight × width` output bytes; all reused between renders (``reset(width:height:)``).
public struct Rasterizer: Sendable {
    /// Image width in pixels.
    public private(set) var width: Int
    /// Image height in pixels.
    public private(set) var height: Int
    /// Maximum distance, in pixels, between a curve and its flattened polyline.
    public var tolerance: Double = 0.1

    /// Largest accepted width or height.
    public static let maxDimension = 1 << 15

    /// Rows resolved together (one band).
    public static let bandHeight = 1 << bandShift
    static let bandShift = 4

    /// Clipped segments of everything filled so far (copy-on-write between copies).
    private var store: SegmentStore
    /// Band buffers, reused between renders; only used through a uniquely referenced instance.
    private var scratch: BandScratch

    /// Creates a rasteriser for a `width` × `height` image; both must be in `1...maxDimension`.
    public init(width: Int, height: Int) {
        precondition(width > 0 && width <= Rasterizer.maxDimension, "Rasterizer width out of range")
        precondition(height > 0 && height <= Rasterizer.maxDimension, "Rasterizer height out of range")
        self.width = width
        self.height = height
        self.store = SegmentStore()
        self.scratch = BandScratch()
    }

    /// Clears everything filled so far and changes the image size, reusing the buffers
    /// (they only grow).
    public mutating func reset(width: Int, height: Int) {
        precondition(width > 0 && width <= Rasterizer.maxDimension, "Rasterizer width out of range")
        precondition(height > 0 && height <= Rasterizer.maxDimension, "Rasterizer height out of range")
        clear()
        self.width = width
        self.height = height
    }

    /// Adds the filled interior of `path` (non-zero rule) to the accumulated coverage.
    ///
    /// Several paths filled in turn combine as one non-zero fill of all their subpaths.
    public mutating func fill(_ path: Path) {
        if path.verbs.isEmpty { return }
        if !isKnownUniquelyReferenced(&store) { store = store.copy() }
        let tol = Float(max(tolerance, 1e-4))
        let sink = Flattener(store: store, w: Float(width), h: Float(height))
        path.verbs.withUnsafeBufferPointer { verbs in
            path.coords.withUnsafeBufferPointer { c in
                sink.run(verbs: verbs, coords: c, tolerance: tol)
            }
        }
    }

    /// Forgets everything filled so far.
    public mutating func clear() {
        if store.count == 0 { return }
        if !isKnownUniquelyReferenced(&store) { store = SegmentStore(); return }
        store.count = 0
    }

    /// The coverage of everything filled so far: `width * height` bytes, row-major,
    /// 0 = empty, 255 = fully covered.
    public func coverage() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height) { buf, count in
            write(into: buf.baseAddress!, scratch: BandScratch())
            count = width * height
        }
    }

    /// Writes the coverage into `out`, which must hold exactly `width * height` bytes
    /// (every byte is written). Lets a caller reuse its buffer.
    public func writeCoverage(into out: inout [UInt8]) {
        precondition(out.count == width * height, "coverage buffer has the wrong size")
        out.withUnsafeMutableBufferPointer { write(into: $0.baseAddress!, scratch: BandScratch()) }
    }

    /// The coverage (as ``coverage()``), then forgets everything filled (as ``clear()``),
    /// reusing this rasteriser's band buffers.
    public mutating func takeCoverage() -> [UInt8] {
        if !isKnownUniquelyReferenced(&scratch) { scratch = BandScratch() }
        let (w, h) = (width, height)
        let s = scratch
        let out = [UInt8](unsafeUninitializedCapacity: w * h) { buf, count in
            write(into: buf.baseAddress!, scratch: s)
            count = w * h
        }
        clear()
        return out
    }

    /// Resolves everything filled so far band by band, top to bottom, and hands each band's
    /// rows to `body` as (index of the band's first row, one pointer per row of `width` coverage
    /// bytes); then forgets everything filled (as ``clear()``), also when `body` throws (the
    /// remaining bands are then skipped). Rows without ink all point to one shared zero row.
    /// The pointers are valid only during the call.
    public mutating func takeRows<E: Error>(
        _ body: (_ firstRow: Int, _ rows: UnsafeBufferPointer<UnsafePointer<UInt8>>) throws(E) -> Void
    ) throws(E) {
        if !isKnownUniquelyReferenced(&scratch) { scratch = BandScratch() }
        var failure: E? = nil
        forEachBand(scratch: scratch) { y, rows in
            do throws(E) {
                try body(y, rows)
                return true
            } catch {
                failure = error
                return false
            }
        }
        clear()
        if let failure { throw failure }
    }

    /// Resolves into a full `width * height` image.
    private func write(into dst: UnsafeMutablePointer<UInt8>, scratch: BandScratch) {
        let w = width
        forEachBand(scratch: scratch) { y0, rows in
            let zero = scratch.zeroRow
            for (i, row) in rows.enumerated() {
                let o = dst + (y0 + i) * w
                if row == zero { o.update(repeating: 0, count: w) } else { o.update(from: row, count: w) }
            }
            return true
        }
    }

    /// The band loop: bins segments by the band of their top, keeps an active list, accumulates,
    /// resolves and hands out each band. Leaves every cell and flag of `scratch` zero, also when
    /// `body` stops early (it is called after the band has been resolved and cleared).
    private func forEachBand(
        scratch s: BandScratch,
        _ body: (Int, UnsafeBufferPointer<UnsafePointer<UInt8>>) -> Bool
    ) {
        let w = width, h = height
        let bandH = Rasterizer.bandHeight
        let bands = (h + bandH - 1) >> Rasterizer.bandShift
        let n = store.count
        s.prepare(width: w, bands: bands, segments: n)
        let segs = UnsafePointer(store.segments)
        let stride = s.stride, bpr = s.blocksPerRow
        let order = s.order, starts = s.starts, active = s.active

        // Counting sort of segment indices by their first band.
        starts.update(repeating: 0, count: bands + 1)
        for i in 0..<n { starts[(Int(segs[i].y0) >> Rasterizer.bandShift) + 1] += 1 }
        for b in 0..<bands { starts[b + 1] += starts[b] }
        do {
            let next = s.cursor
            next.update(from: starts, count: bands)
            for i in 0..<n {
                let b = Int(segs[i].y0) >> Rasterizer.bandShift
                order[Int(next[b])] = Int32(i)
                next[b] += 1
            }
        }

        let band = Band(acc: s.acc, flags: s.flags, ink: s.ink, blocksPerRow: bpr, stride: stride, w: Float(w))
        let rowPointers = s.rows
        var activeCount = 0
        for b in 0..<bands {
            let top = b << Rasterizer.bandShift
            let bottom = min(top + bandH, h)
            let ftop = Float(top), fbottom = Float(bottom)
            for k in Int(starts[b])..<Int(starts[b + 1]) {
                active[activeCount] = order[k]
                activeCount += 1
            }
            // Accumulate the part of every active segment inside this band; keep those going on.
            var kept = 0
            for k in 0..<activeCount {
                let index = active[k]
                let g = segs[Int(index)]
                let ya = max(g.y0, ftop), yb = min(g.y1, fbottom)
                if ya < yb {
                    let dxdy = (g.x1 - g.x0) / (g.y1 - g.y0)
                    let xa = ya == g.y0 ? g.x0 : min(max(g.x0 + (ya - g.y0) * dxdy, 0), band.w)
                    let xb = yb == g.y1 ? g.x1 : min(max(g.x0 + (yb - g.y0) * dxdy, 0), band.w)
                    band.span(xa, ya - ftop, xb, yb - ftop, g.dir)
                }
                if g.y1 > fbottom {
                    active[kept] = index
                    kept += 1
                }
            }
            activeCount = kept
            // Resolve the band's rows.
            for r in 0..<(bottom - top) {
                if s.ink[r] == 0 {
                    rowPointers[r] = UnsafePointer(s.zero)
                    continue
                }
                s.ink[r] = 0
                let o = s.out + r * w
                Rasterizer.resolveRow(
                    into: o, cells: s.acc + r * stride, flags: s.flags + r * bpr, width: w, stride: stride,
                    blocksPerRow: bpr)
                rowPointers[r] = UnsafePointer(o)
            }
            if !body(top, UnsafeBufferPointer(start: rowPointers, count: bottom - top)) { break }
        }
    }

    /// Prefix-sums one row of cells into 8-bit coverage and clears those cells and flags.
    /// Clean blocks are filled with the running winding (almost always 0) without reading their
    /// cells; dirty blocks are summed four cells at a time so the loop-carried dependency is one
    /// add per four pixels.
    @inline(__always)
    private static func resolveRow(
        into orow: UnsafeMutablePointer<UInt8>, cells arow: UnsafeMutablePointer<Float>,
        flags frow: UnsafeMutablePointer<UInt8>, width w: Int, stride: Int, blocksPerRow bpr: Int
    ) {
        var s: Float = 0
        // Four copies of `Cells.byte(s)`, kept up to date as `s` changes (converting `s` again for
        // every untouched group was about 15 % of this function).
        var fill: UInt32 = 0
        var b = 0
        while b < bpr {
            let x0 = b << Cells.blockShift
            if x0 >= w {
                // Cells past the image (x = w, w + 1) are never output, only cleared.
                for e in b..<bpr where frow[e] != 0 {
                    let xe = e << Cells.blockShift
                    (arow + xe).update(repeating: 0, count: min(Cells.blockSize, stride - xe))
                    frow[e] = 0
                }
                break
            }
            let x1 = min(x0 + Cells.blockSize, w)
            if frow[b] == 0 {
                // Merge a run of clean blocks into one fill.
                var e = b + 1
                while e < bpr && frow[e] == 0 && (e << Cells.blockShift) < w { e += 1 }
                let xe = min(e << Cells.blockShift, w)
                (orow + x0).update(repeating: UInt8(truncatingIfNeeded: fill), count: xe - x0)
                b = e
                continue
            }
            var x = x0
            while x + 4 <= x1 {
                let c0 = arow[x], c1 = arow[x + 1], c2 = arow[x + 2], c3 = arow[x + 3]
                if (c0.bitPattern | c1.bitPattern | c2.bitPattern | c3.bitPattern) & 0x7FFF_FFFF == 0 {
                    // Four untouched cells: constant winding.
                    UnsafeMutableRawPointer(orow + x).storeBytes(of: fill, as: UInt32.self)
                    x += 4
                    continue
                }
                let p1 = c0 + c1
                let p3 = p1 + (c2 + c3)
                let s0 = s + c0, s1 = s + p1, s2 = s1 + c2, s3 = s + p3
                let bytes = Cells.bytes(SIMD4(s0, s1, s2, s3))
                UnsafeMutableRawPointer(orow + x).storeBytes(of: bytes, as: UInt32.self)
                s = s3
                fill = (bytes >> 24) &* 0x0101_0101  // the last lane is byte(s3)
                x += 4
            }
            while x < x1 {
                s += arow[x]
                orow[x] = Cells.byte(s)
                fill = UInt32(orow[x]) &* 0x0101_0101
                x += 1
            }
            if x0 + Cells.blockSize <= stride {
                // Four 16-byte stores inline: a memset call per block cost more than the stores.
                let cells = UnsafeMutableRawPointer(arow + x0)
                for offset in Swift.stride(from: 0, to: Cells.blockSize * 4, by: 16) {
                    cells.storeBytes(of: SIMD4<Float>(), toByteOffset: offset, as: SIMD4<Float>.self)
                }
            } else {
                (arow + x0).update(repeating: 0, count: stride - x0)
            }
            frow[b] = 0
            b += 1
        }
    }
}

/// One clipped line segment: inside [0, w] × [0, h], `y0 < y1`, `dir` = ±1 (the original
/// direction along y).
struct Segment {
    var x0: Float
    var y0: Float
    var x1: Float
    var y1: Float
    var dir: Float
}

/// Growable segment storage (a class so the flattener can append through it; the rasteriser
/// copies it before writing when it is shared).
final class SegmentStore: @unchecked Sendable {
    private(set) var segments: UnsafeMutablePointer<Segment>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int = 256) {
        self.capacity = capacity
        self.segments = .allocate(capacity: capacity)
    }

    deinit { segments.deallocate() }

    func copy() -> SegmentStore {
        let c = SegmentStore(capacity: max(capacity, 1))
        c.segments.update(from: segments, count: count)
        c.count = count
        return c
    }

    @inline(__always)
    func append(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ dir: Float) {
        if count == capacity { grow() }
        segments[count] = Segment(x0: x0, y0: y0, x1: x1, y1: y1, dir: dir)
        count += 1
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<Segment>.allocate(capacity: capacity * 2)
        bigger.update(from: segments, count: count)
        segments.deallocate()
        segments = bigger
        capacity *= 2
    }
}

/// The band buffers. Cells, flags and ink marks are all zero between uses.
final class BandScratch: @unchecked Sendable {
    private(set) var width = 0
    private(set) var stride = 0
    private(set) var blocksPerRow = 0
    /// `bandHeight × stride` cells.
    private(set) var acc: UnsafeMutablePointer<Float> = .allocate(capacity: 0)
    /// `bandHeight × blocksPerRow` flags: non-zero when a block of 16 cells may be non-zero.
    private(set) var flags: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    /// One mark per band row: non-zero when the row has any cell.
    private(set) var ink: UnsafeMutablePointer<UInt8> = .allocate(capacity: Rasterizer.bandHeight)
    /// `bandHeight × width` output bytes.
    private(set) var out: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    /// `width` zero bytes.
    private(set) var zero: UnsafeMutablePointer<UInt8> = .allocate(capacity: 0)
    var zeroRow: UnsafePointer<UInt8> { UnsafePointer(zero) }
    /// One row pointer per band row.
    let rows: UnsafeMutablePointer<UnsafePointer<UInt8>> = .allocate(capacity: Rasterizer.bandHeight)
    private(set) var order: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private(set) var active: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private var segmentCapacity = 0
    private(set) var starts: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private(set) var cursor: UnsafeMutablePointer<Int32> = .allocate(capacity: 0)
    private var bandCapacity = -1

    init() {
        ink.initialize(repeating: 0, count: Rasterizer.bandHeight)
    }

    deinit {
        for p in [UnsafeMutableRawPointer(acc), UnsafeMutableRawPointer(flags), UnsafeMutableRawPointer(ink),
                  UnsafeMutableRawPointer(out), UnsafeMutableRawPointer(zero), UnsafeMutableRawPointer(rows),
                  UnsafeMutableRawPointer(order), UnsafeMutableRawPointer(active), UnsafeMutableRawPointer(starts),
                  UnsafeMutableRawPointer(cursor)] {
            p.deallocate()
        }
    }

    /// Sizes the buffers for an image `width` wide with `bands` bands and `segments` segments.
    func prepare(width w: Int, bands: Int, segments n: Int) {
        if w != width {
            let bandH = Rasterizer.bandHeight
            let stride = w + 2
            let bpr = (stride + Cells.blockSize - 1) >> Cells.blockShift
            acc.deallocate()
            flags.deallocate()
            out.deallocate()
            zero.deallocate()
            acc = .allocate(capacity: bandH * stride)
            acc.initialize(repeating: 0, count: bandH * stride)
            flags = .allocate(capacity: bandH * bpr)
            flags.initialize(repeating: 0, count: bandH * bpr)
            out = .allocate(capacity: bandH * w)
            zero = .allocate(capacity: w)
            zero.initialize(repeating: 0, count: w)
            self.width = w
            self.stride = stride
            self.blocksPerRow = bpr
        }
        if n > segmentCapacity {
            let cap = max(n, segmentCapacity * 2)
            order.deallocate()
            active.deallocate()
            order = .allocate(capacity: cap)
            active = .allocate(capacity: cap)
            segmentCapacity = cap
        }
        if bands > bandCapacity {
            starts.deallocate()
            cursor.deallocate()
            starts = .allocate(capacity: bands + 1)
            cursor = .allocate(capacity: bands + 1)
            bandCapacity = bands
        }
    }
}

/// One band's cells, in band-relative rows.
struct Band {
    let acc: UnsafeMutablePointer<Float>
    let flags: UnsafeMutablePointer<UInt8>
    let ink: UnsafeMutablePointer<UInt8>
    let blocksPerRow: Int
    let stride: Int
    let w: Float

    /// Accumulates a segment inside [0, w] × [0, bandHeight] (band-relative y) with y0 < y1.
    @inline(__always)
    func span(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ dir: Float) {
        let dxdy = (x1 - x0) / (y1 - y0)
        var x = x0
        let yStart = Int(y0)
        let yEnd = Cells.ceil(y1)
        var y = yStart
        while y < yEnd {
            let fy = Float(y)
            let dy = min(fy + 1, y1) - max(fy, y0)
            let xnext = y == yEnd - 1 ? x1 : min(max(x + dxdy * dy, 0), w)
            let d = dy * dir
            let row = acc + y * stride
            let xa = min(x, xnext), xb = max(x, xnext)
            // xa, xb >= 0: truncation is the floor (and no libm call, unlike `rounded`).
            let xai = Int(xa)
            let xaf = Float(xai)
            let xbi = Cells.ceil(xb)
            let xbc = Float(xbi)
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
            ink[y] = 1
            let flags = flags + y * blocksPerRow
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

/// Constants and the 8-bit conversion shared by accumulation and resolving.
enum Cells {
    static let blockShift = 4
    static let blockSize = 1 << blockShift

    /// Largest number of line segments one curve is flattened into.
    static let maxCurveSegments: Float = 2048

    @inline(__always)
    static func byte(_ s: Float) -> UInt8 {
        let v = Swift.min(Swift.abs(s), 1) * 255 + 0.5
        return UInt8(v)
    }

    /// ``byte(_:)`` of four sums at once, as the four bytes of the result (lowest = first):
    /// the same arithmetic (|s| clamped to 1, × 255, + 0.5, truncated) in SSE registers, with the
    /// truncation done exactly by the 2^23 rounding trick instead of four checked conversions.
    @inline(__always)
    static func bytes(_ v: SIMD4<Float>) -> UInt32 {
        let big = SIMD4<Float>(repeating: 8_388_608)  // 2^23: adding it rounds to an integer
        let m = unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7FFF_FFFF, to: SIMD4<Float>.self)
        let a = m.replacing(with: 1, where: m .> 1) * 255 + 0.5  // in [0.5, 255.5]
        let r = (a + big) - big  // a rounded to the nearest integer
        let f = r.replacing(with: r - 1, where: r .> a)  // rounded down: the truncation of a
        return unsafeBitCast(
            SIMD4<UInt8>(truncatingIfNeeded: unsafeBitCast(f + big, to: SIMD4<UInt32>.self)), to: UInt32.self)
    }

    /// The ceiling of a non-negative value, without a libm call.
    @inline(__always)
    static func ceil(_ v: Float) -> Int {
        let t = Int(v)
        return Float(t) < v ? t + 1 : t
    }
}

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
