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
        // Four copies of `Cells.byte(s)`, kept up to date as `s` changes: converting `s` again for
        // every untouched group showed in profiles of this function.
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
