import Testing
import Raster

// MARK: - An exact reference: per-pixel polygon clipping (Sutherland–Hodgman) + shoelace area.
// Exact for a simple polygon, which is what these tests feed it.

private typealias P = (x: Double, y: Double)

private func clip(_ poly: [P], _ inside: (P) -> Bool, _ cross: (P, P) -> P) -> [P] {
    guard let last = poly.last else { return [] }
    var out: [P] = []
    var prev = last
    for cur in poly {
        let ci = inside(cur), pi = inside(prev)
        if ci {
            if !pi { out.append(cross(prev, cur)) }
            out.append(cur)
        } else if pi {
            out.append(cross(prev, cur))
        }
        prev = cur
    }
    return out
}

private func area(_ poly: [P]) -> Double {
    var s = 0.0
    for i in poly.indices {
        let a = poly[i], b = poly[(i + 1) % poly.count]
        s += a.x * b.y - b.x * a.y
    }
    return abs(s) / 2
}

private func pixelArea(_ poly: [P], _ px: Int, _ py: Int) -> Double {
    let x0 = Double(px), x1 = Double(px + 1), y0 = Double(py), y1 = Double(py + 1)
    func xCross(_ x: Double) -> (P, P) -> P {
        { a, b in let t = (x - a.x) / (b.x - a.x); return (x, a.y + t * (b.y - a.y)) }
    }
    func yCross(_ y: Double) -> (P, P) -> P {
        { a, b in let t = (y - a.y) / (b.y - a.y); return (a.x + t * (b.x - a.x), y) }
    }
    var p = clip(poly, { $0.x >= x0 }, xCross(x0))
    p = clip(p, { $0.x <= x1 }, xCross(x1))
    p = clip(p, { $0.y >= y0 }, yCross(y0))
    p = clip(p, { $0.y <= y1 }, yCross(y1))
    return area(p)
}

private func reference(_ poly: [P], width: Int, height: Int) -> [Double] {
    var out = [Double](repeating: 0, count: width * height)
    for y in 0..<height {
        for x in 0..<width { out[y * width + x] = pixelArea(poly, x, y) }
    }
    return out
}

private func path(_ poly: [P]) -> Path {
    var p = Path()
    p.move(poly[0].x, poly[0].y)
    for q in poly.dropFirst() { p.line(q.x, q.y) }
    p.close()
    return p
}

private func render(_ paths: [Path], width: Int, height: Int) -> [UInt8] {
    var r = Rasterizer(width: width, height: height)
    for p in paths { r.fill(p) }
    return r.coverage()
}

/// Largest difference, in 8-bit levels, between our coverage and exact areas.
private func maxError(_ got: [UInt8], _ exact: [Double]) -> Double {
    var m = 0.0
    for i in got.indices { m = max(m, abs(Double(got[i]) - exact[i] * 255)) }
    return m
}

/// Deterministic pseudo-random numbers (SplitMix64), so failures reproduce.
private struct SplitMix {
    var state: UInt64
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}

// MARK: - Tests

@Suite struct RasterTests {
    @Test func axisAlignedRectangleWithFractionalEdgesIsExact() {
        var p = Path()
        p.rect(x: 2.25, y: 1.5, width: 3.5, height: 1.75)  // x 2.25...5.75, y 1.5...3.25
        let got = render([p], width: 8, height: 6)
        let exact = reference([(2.25, 1.5), (5.75, 1.5), (5.75, 3.25), (2.25, 3.25)], width: 8, height: 6)
        for i in got.indices {
            #expect(got[i] == UInt8((exact[i] * 255).rounded()), "pixel \(i % 8),\(i / 8)")
        }
        // Spot checks: corner pixel (2,1) has area 0.75 * 0.5.
        #expect(got[1 * 8 + 2] == UInt8((0.375 * 255).rounded()))
        #expect(got[2 * 8 + 3] == 255)
        #expect(got[0] == 0)
    }

    @Test func bothOrientationsGiveTheSameCoverage() {
        var cw = Path(), ccw = Path()
        cw.rect(x: 0.3, y: 0.7, width: 5.2, height: 3.1)
        ccw.move(0.3, 0.7); ccw.line(0.3, 3.8); ccw.line(5.5, 3.8); ccw.line(5.5, 0.7); ccw.close()
        #expect(render([cw], width: 7, height: 5) == render([ccw], width: 7, height: 5))
    }

    @Test func triangleAreaSumAndPerPixelExactness() {
        let tri: [P] = [(3.2, 1.7), (41.9, 12.35), (11.4, 29.8)]
        let got = render([path(tri)], width: 48, height: 32)
        let exact = reference(tri, width: 48, height: 32)
        let sum = got.reduce(0.0) { $0 + Double($1) } / 255
        #expect(abs(sum - area(tri)) < 0.5, "sum \(sum) vs area \(area(tri))")
        #expect(maxError(got, exact) <= 0.51)
    }

    @Test func randomPolygonsMatchExactAreaIncludingClipping() {
        var rng = SplitMix(state: 42)
        let w = 24, h = 18
        for _ in 0..<300 {
            // Triangles and convex quads spilling well outside the image on every side.
            let n = rng.next() < 0.5 ? 3 : 4
            let cx = rng.next() * 40 - 8, cy = rng.next() * 34 - 8, r = 1 + rng.next() * 20
            let phase = rng.next() * 6.283
            var poly: [P] = []
            for k in 0..<n {
                let a = phase + Double(k) * 6.283185307 / Double(n) + rng.next() * 0.5
                poly.append((cx + r * cosine(a), cy + r * sine(a)))
            }
            let got = render([path(poly)], width: w, height: h)
            let exact = reference(poly, width: w, height: h)
            #expect(maxError(got, exact) <= 0.6, "polygon \(poly)")
        }
    }

    @Test func clippingAtEveryEdge() {
        // Covers the whole image and more: every pixel full.
        var big = Path()
        big.rect(x: -100, y: -50, width: 1000, height: 1000)
        #expect(render([big], width: 10, height: 7).allSatisfy { $0 == 255 })
        // Entirely outside on each side: nothing.
        for (x, y) in [(-30.0, 2.0), (20.0, 2.0), (2.0, -30.0), (2.0, 20.0)] {
            var p = Path()
            p.rect(x: x, y: y, width: 5, height: 5)
            #expect(render([p], width: 10, height: 7).allSatisfy { $0 == 0 })
        }
        // Spilling off the left and right: the visible part is exact.
        var left = Path()
        left.rect(x: -10, y: 1, width: 13.5, height: 2)  // x -10 ... 3.5
        let l = render([left], width: 10, height: 7)
        #expect(l[1 * 10 + 0] == 255 && l[1 * 10 + 2] == 255 && l[1 * 10 + 3] == 128 && l[1 * 10 + 4] == 0)
        var right = Path()
        right.rect(x: 6.25, y: 1, width: 100, height: 2)
        let r = render([right], width: 10, height: 7)
        #expect(r[2 * 10 + 5] == 0 && r[2 * 10 + 6] == 191 && r[2 * 10 + 9] == 255)
        #expect(r[0] == 0 && r[5 * 10 + 9] == 0)
    }

    @Test func hugeAndNonFiniteCoordinatesDoNotCrash() {
        var p = Path()
        p.move(-1e30, 3); p.line(1e30, 4); p.line(.nan, .infinity); p.close()
        p.move(2, 2); p.cubic(1e20, -1e20, -1e20, 1e20, 3, 3); p.close()
        _ = render([p], width: 16, height: 16)
    }

    @Test func nonZeroOverlapClampsToFull() {
        var a = Path(), b = Path()
        a.rect(x: 1, y: 1, width: 6, height: 4)
        b.rect(x: 3.5, y: 2, width: 6, height: 4)
        let one = render([a, b], width: 12, height: 8)
        var both = Path()
        both.rect(x: 1, y: 1, width: 6, height: 4)
        both.rect(x: 3.5, y: 2, width: 6, height: 4)
        #expect(render([both], width: 12, height: 8) == one)
        #expect(one[3 * 12 + 5] == 255)  // inside the overlap: winding 2 -> full
        #expect(one[2 * 12 + 3] == 255)  // overlap's edge inside a: still full, not 1.5
        #expect(one[1 * 12 + 8] == 0)
        // The union's area equals the exact union area (edges are pixel-aligned or in full pixels).
        let sum = one.reduce(0) { $0 + Int($1) }
        #expect(abs(Double(sum) / 255 - (24 + 24 - 3.5 * 3)) < 0.1)
    }

    @Test func nonZeroSelfIntersectingStarIsFilled() {
        // A pentagram: the centre has winding 2 and must be filled (even-odd would leave a hole).
        var p = Path()
        let c = 20.0, r = 18.0
        for k in 0..<5 {
            let a = -1.5707963 + Double(k * 2) * 1.2566371
            if k == 0 { p.move(c + r * cosine(a), c + r * sine(a)) } else { p.line(c + r * cosine(a), c + r * sine(a)) }
        }
        p.close()
        let got = render([p], width: 40, height: 40)
        #expect(got[20 * 40 + 20] == 255)
    }

    @Test func oppositeWindingCancelsUnderNonZero() {
        var p = Path()
        p.rect(x: 0, y: 0, width: 10, height: 10)
        p.move(3, 3); p.line(3, 7); p.line(7, 7); p.line(7, 3); p.close()  // reversed: a hole
        let got = render([p], width: 10, height: 10)
        #expect(got[5 * 10 + 5] == 0 && got[1 * 10 + 1] == 255)
    }

    @Test func openSubpathsAreClosedImplicitly() {
        var open = Path(), closed = Path()
        open.move(1, 1); open.line(9, 2); open.line(4, 8)
        closed.move(1, 1); closed.line(9, 2); closed.line(4, 8); closed.close()
        #expect(render([open], width: 10, height: 10) == render([closed], width: 10, height: 10))
    }

    @Test(arguments: [0.1, 0.02])
    func cubicCircleWithinTolerance(_ tolerance: Double) {
        // Circle of radius 30 as four cubics; compare with a 4,000-gon of the same curves.
        let k = 0.5522847498 * 30, c = 32.3, r = 30.0
        let segs: [(P, P, P, P)] = [
            ((c + r, c), (c + r, c + k), (c + k, c + r), (c, c + r)),
            ((c, c + r), (c - k, c + r), (c - r, c + k), (c - r, c)),
            ((c - r, c), (c - r, c - k), (c - k, c - r), (c, c - r)),
            ((c, c - r), (c + k, c - r), (c + r, c - k), (c + r, c)),
        ]
        var p = Path()
        p.move(c + r, c)
        var fine: [P] = []
        for (p0, p1, p2, p3) in segs {
            p.cubic(p1.x, p1.y, p2.x, p2.y, p3.x, p3.y)
            for i in 0..<1000 {
                let t = Double(i) / 1000, u = 1 - t
                fine.append((
                    u * u * u * p0.x + 3 * u * u * t * p1.x + 3 * u * t * t * p2.x + t * t * t * p3.x,
                    u * u * u * p0.y + 3 * u * u * t * p1.y + 3 * u * t * t * p2.y + t * t * t * p3.y))
            }
        }
        p.close()
        var ras = Rasterizer(width: 65, height: 65)
        ras.tolerance = tolerance
        ras.fill(p)
        let got = ras.coverage()
        let exact = reference(fine, width: 65, height: 65)
        // A chord within `tolerance` of the curve changes a pixel's area by at most `tolerance`.
        #expect(maxError(got, exact) <= tolerance * 255 + 1)
        let sum = got.reduce(0.0) { $0 + Double($1) } / 255
        #expect(abs(sum - area(fine)) < 2 * 3.1416 * r * tolerance)
    }

    @Test func quadraticWithinTolerance() {
        // Parabolic cap: (2,30) -> ctrl (20,-20) -> (38,30), closed by the chord.
        let p0: P = (2, 30), p1: P = (20, -20), p2: P = (38, 30)
        var p = Path()
        p.move(p0.x, p0.y); p.quad(p1.x, p1.y, p2.x, p2.y); p.close()
        var fine: [P] = []
        for i in 0...2000 {
            let t = Double(i) / 2000, u = 1 - t
            fine.append((u * u * p0.x + 2 * u * t * p1.x + t * t * p2.x, u * u * p0.y + 2 * u * t * p1.y + t * t * p2.y))
        }
        let got = render([p], width: 40, height: 32)
        let exact = reference(fine, width: 40, height: 32)
        #expect(maxError(got, exact) <= 0.1 * 255 + 1)
        // Exact area of a parabolic segment: 2/3 of the triangle p0 p1 p2.
        let sum = got.reduce(0.0) { $0 + Double($1) } / 255
        #expect(abs(sum - area(fine)) < 3)
    }

    @Test func takeCoverageClearsAndResetReuses() {
        var r = Rasterizer(width: 33, height: 9)  // width + 2 spills into an extra flag block
        var a = Path()
        a.rect(x: 1.5, y: 1.25, width: 40, height: 5)  // runs past the right edge
        a.rect(x: 20.3, y: 0, width: 3, height: 9)
        r.fill(a)
        let expected = r.coverage()
        #expect(r.takeCoverage() == expected)
        #expect(r.coverage().allSatisfy { $0 == 0 }, "takeCoverage leaves nothing behind")
        r.fill(a)
        #expect(r.takeCoverage() == expected)
        // Different sizes through the same buffers give what a fresh rasteriser gives.
        for (w, h) in [(64, 20), (10, 30), (33, 9)] {
            r.reset(width: w, height: h)
            r.fill(a)
            var fresh = Rasterizer(width: w, height: h)
            fresh.fill(a)
            #expect(r.width == w && r.height == h)
            #expect(r.takeCoverage() == fresh.coverage(), "\(w)x\(h)")
        }
    }

    @Test func bandsGiveTheSameRowsAsTheWholeImage() {
        // Taller than several bands and not a multiple of the band height; long segments cross
        // many bands, short ones start and end exactly on band boundaries.
        let w = 37, h = Rasterizer.bandHeight * 3 + 5
        var p = Path()
        p.move(2, 0.5); p.line(30, Double(h) - 1.5); p.line(5, Double(h) - 3); p.close()
        p.rect(x: 10, y: Double(Rasterizer.bandHeight), width: 20, height: Double(Rasterizer.bandHeight))
        p.move(-5, -3); p.cubic(60, 10, -20, 30, 36.5, Double(h) + 4); p.line(1, 20); p.close()
        var r = Rasterizer(width: w, height: h)
        r.fill(p)
        let whole = r.coverage()
        var rows: [UInt8] = []
        var firstRows: [Int] = []
        var zeroRows = Set<UnsafePointer<UInt8>>()
        r.takeRows { (first: Int, band: UnsafeBufferPointer<UnsafePointer<UInt8>>) in
            firstRows.append(first)
            #expect(band.count == min(Rasterizer.bandHeight, h - first))
            for row in band {
                let bytes = Array(UnsafeBufferPointer(start: row, count: w))
                if bytes.allSatisfy({ $0 == 0 }) { zeroRows.insert(row) }
                rows += bytes
            }
        }
        #expect(rows == whole)
        #expect(firstRows == Array(stride(from: 0, to: h, by: Rasterizer.bandHeight)))
        #expect(whole.contains(255) && whole.contains(0))
        #expect(r.coverage().allSatisfy { $0 == 0 }, "takeRows leaves nothing behind")
        // Rows without ink are the one shared zero row (never summed).
        var blank = Rasterizer(width: w, height: h)
        var seen = Set<UnsafePointer<UInt8>>()
        blank.takeRows { (_: Int, band: UnsafeBufferPointer<UnsafePointer<UInt8>>) in band.forEach { seen.insert($0) } }
        #expect(seen.count == 1)
    }

    @Test func takeRowsStopsAtTheFirstErrorAndStillClears() {
        struct Stop: Error {}
        let w = 20, h = Rasterizer.bandHeight * 4
        var p = Path()
        p.rect(x: 1.5, y: 1.5, width: 15, height: Double(h) - 3)
        var r = Rasterizer(width: w, height: h)
        r.fill(p)
        let expected = r.coverage()
        var bands = 0
        #expect(throws: Stop.self) {
            try r.takeRows { (_: Int, _: UnsafeBufferPointer<UnsafePointer<UInt8>>) throws(Stop) in
                bands += 1
                if bands == 2 { throw Stop() }
            }
        }
        #expect(bands == 2)
        #expect(r.coverage().allSatisfy { $0 == 0 })
        // The band buffers are clean: the next render is complete and exact.
        r.fill(p)
        #expect(r.takeCoverage() == expected)
    }

    @Test func copiesAreIndependent() {
        var a = Rasterizer(width: 12, height: 40)
        var p = Path()
        p.rect(x: 1, y: 1, width: 5, height: 30)
        a.fill(p)
        let b = a  // shares storage until one of them writes
        var q = Path()
        q.rect(x: 7, y: 2, width: 3, height: 3)
        a.fill(q)
        var onlyP = Rasterizer(width: 12, height: 40)
        onlyP.fill(p)
        #expect(b.coverage() == onlyP.coverage())
        #expect(a.coverage() != b.coverage())
        a.clear()
        #expect(b.coverage() == onlyP.coverage())
    }

    @Test func clearAndReuse() {
        var r = Rasterizer(width: 20, height: 10)
        var a = Path()
        a.rect(x: 1.5, y: 1.5, width: 5, height: 5)
        r.fill(a)
        let first = r.coverage()
        r.clear()
        #expect(r.coverage().allSatisfy { $0 == 0 })
        r.fill(a)
        #expect(r.coverage() == first)
        var buf = [UInt8](repeating: 7, count: 200)
        r.writeCoverage(into: &buf)
        #expect(buf == first)
    }
}

// Foundation-free trigonometry for the tests (Taylor series is plenty for these angles).
private func sine(_ x: Double) -> Double {
    var a = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if a > Double.pi { a -= 2 * Double.pi }
    if a < -Double.pi { a += 2 * Double.pi }
    var term = a, sum = a
    for n in 1..<12 {
        term *= -a * a / Double((2 * n) * (2 * n + 1))
        sum += term
    }
    return sum
}

private func cosine(_ x: Double) -> Double { sine(x + Double.pi / 2) }
