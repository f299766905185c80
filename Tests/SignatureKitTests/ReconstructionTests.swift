import Foundation
import Testing
import InkTestSupport
import SignatureKit

private func P(_ x: Double, _ y: Double) -> Point { Point(x: x, y: y) }

/// Element-wise comparison with a small tolerance (the expectations are worked out by hand).
private func approxEqual(_ a: [PathElement], _ b: [PathElement], tolerance: Double = 1e-9) -> Bool {
    guard a.count == b.count else { return false }
    func close(_ p: Point, _ q: Point) -> Bool { abs(p.x - q.x) <= tolerance && abs(p.y - q.y) <= tolerance }
    for (x, y) in zip(a, b) {
        switch (x, y) {
        case (.move(let p), .move(let q)), (.line(let p), .line(let q)):
            if !close(p, q) { return false }
        case (.quad(let c1, let p), .quad(let c2, let q)):
            if !close(c1, c2) || !close(p, q) { return false }
        case (.cubic(let a1, let a2, let p), .cubic(let b1, let b2, let q)):
            if !close(a1, b1) || !close(a2, b2) || !close(p, q) { return false }
        case (.close, .close): break
        default: return false
        }
    }
    return true
}

@Suite("Weighted-Bézier reconstruction")
struct ReconstructionTests {
    @Test("weight = max(0, 50 - d) * 0.1 + 2")
    func weights() {
        #expect(SignatureReconstructor.weight(forDistance: 0) == 7)
        #expect(abs(SignatureReconstructor.weight(forDistance: 25) - 4.5) < 1e-12)
        #expect(SignatureReconstructor.weight(forDistance: 50) == 2)
        #expect(SignatureReconstructor.weight(forDistance: 80) == 2)
        #expect(SignatureReconstructor.algorithmVersion == "ubersignature-weighted-bezier/1")
    }

    @Test("points closer than 2 units to the last accepted point are skipped")
    func skipThreshold() {
        var r = SignatureReconstructor()
        #expect(r.add(P(0, 0)).accepted)
        #expect(!r.add(P(1.9, 0)).accepted)
        #expect(!r.add(P(1.2, 1.2)).accepted)   // distance 1.697
        let u = r.add(P(2, 0))                   // exactly 2: accepted
        #expect(u.accepted)
        // Distance is measured to the last *accepted* point (2, 0), not the skipped ones.
        #expect(!r.add(P(3.9, 0)).accepted)
        #expect(r.add(P(4, 0)).accepted)
        // The skipped points changed nothing: three accepted points give a quad.
        #expect(r.temporary.contains { if case .quad = $0 { return true } else { return false } })
    }

    @Test("one point: a circle of radius 3 as four cubics, clockwise on screen")
    func dot() {
        var r = SignatureReconstructor()
        let u = r.add(P(10, 20))
        #expect(u.finalized == nil)
        let d = u.temporary
        #expect(d.count == 6)
        guard case .move(let start) = d.first else { Issue.record("no move"); return }
        #expect(start == P(13, 20))
        var ends: [Point] = []
        for e in d { if case .cubic(_, _, let to) = e { ends.append(to) } }
        #expect(ends == [P(10, 23), P(7, 20), P(10, 17), P(13, 20)])
        #expect(d.last == .close)
        #expect(onCurveArea(d) > 0)
        // Mid-arc point of the first cubic lies on the circle (kappa correct to 0.03 %).
        if case .cubic(let c1, let c2, let to) = d[1] {
            let mx = 0.125 * start.x + 0.375 * c1.x + 0.375 * c2.x + 0.125 * to.x
            let my = 0.125 * start.y + 0.375 * c1.y + 0.375 * c2.y + 0.125 * to.y
            let radius = ((mx - 10) * (mx - 10) + (my - 20) * (my - 20)).squareRoot()
            #expect(abs(radius - 3) < 3 * 3e-4)
        }
    }

    @Test("two points: the Objective-C quadrilateral (not a triangle)")
    func twoPoints() {
        var r = SignatureReconstructor()
        _ = r.add(P(0, 0))
        let u = r.add(P(10, 0))   // weight 3 at A, weight(10) = 6 at B
        #expect(approxEqual(u.temporary, [
            .move(P(0, -1.5)), .line(P(10, -3)), .line(P(10, 3)), .line(P(0, 1.5)), .close,
        ]))
        #expect(onCurveArea(u.temporary) > 0)
    }

    @Test("three points: quadratics with the averaged bar at B as control")
    func threePoints() {
        var r = SignatureReconstructor()
        _ = r.add(P(0, 0))
        _ = r.add(P(10, 0))
        let u = r.add(P(10, 10))  // a right-angle turn: the bars at B really are averaged
        // Bars at B: from AB (10,-3)/(10,3), from BC (13,0)/(7,0) -> averaged (11.5,-1.5)/(8.5,1.5).
        #expect(approxEqual(u.temporary, [
            .move(P(0, -1.5)), .quad(control: P(11.5, -1.5), to: P(13, 10)), .line(P(7, 10)),
            .quad(control: P(8.5, 1.5), to: P(0, 1.5)), .close,
        ]))
    }

    @Test("four points: cubic A.start -> D.start, line, cubic back to A.end")
    func fourPoints() {
        var r = SignatureReconstructor()
        for x in [0.0, 10, 20] { _ = r.add(P(x, 0)) }
        let u = r.add(P(30, 0))
        #expect(u.finalized == nil)
        #expect(approxEqual(u.temporary, [
            .move(P(0, -1.5)), .cubic(control1: P(10, -3), control2: P(20, -3), to: P(30, -3)),
            .line(P(30, 3)), .cubic(control1: P(20, 3), control2: P(10, 3), to: P(0, 1.5)), .close,
        ]))
    }

    @Test("fifth point: p3 becomes the midpoint of p2 and p4, the cubic is finalised, a new segment starts there")
    func join() {
        var r = SignatureReconstructor()
        for x in [0.0, 10, 20, 30] { _ = r.add(P(x, 0)) }
        let u = r.add(P(50, 0))
        // Midpoint of (20,0) and (50,0) is (35,0); its weight is from distance 15 -> 5.5.
        #expect(approxEqual(u.finalized ?? [], [
            .move(P(0, -1.5)), .cubic(control1: P(10, -3), control2: P(20, -3), to: P(35, -2.75)),
            .line(P(35, 2.75)), .cubic(control1: P(20, 3), control2: P(10, 3), to: P(0, 1.5)), .close,
        ]))
        // The new point's weight comes from its distance to the original p3 (30,0): 20 -> 5.
        #expect(approxEqual(u.temporary, [
            .move(P(35, -2.75)), .line(P(50, -2.5)), .line(P(50, 2.5)), .line(P(35, 2.75)), .close,
        ]))
    }

    @Test("a long stroke finalises one cubic per 3 accepted points after the first four")
    func manyPoints() {
        var r = SignatureReconstructor()
        var finalized = 0
        for i in 0..<20 { if r.add(P(Double(i) * 5, Double(i % 3))).finalized != nil { finalized += 1 } }
        // Points 5, 8, 11, 14, 17 and 20 (1-based) each complete a cubic: after a join the
        // segment holds the midpoint and the new point, so two more points fill it again.
        #expect(finalized == 6)
        #expect(r.isStrokeOpen)
    }

    @Test("stroke end finalises the pending shape as it is, for every pending size")
    func strokeEnd() {
        for n in 1...4 {
            var r = SignatureReconstructor()
            for i in 0..<n { _ = r.add(P(Double(i) * 10, 0)) }
            let pending = r.temporary
            let ended = r.endStroke()
            #expect(ended == pending)
            #expect(!r.isStrokeOpen)
            #expect(r.endStroke() == nil)
        }
        // After the end, the next point starts a new stroke with a dot of weight 3.
        var r = SignatureReconstructor()
        _ = r.add(P(0, 0)); _ = r.add(P(10, 0))
        _ = r.endStroke()
        let u = r.add(P(0.5, 0))   // would be skipped inside a stroke; a new stroke accepts it
        #expect(u.accepted)
        #expect(u.temporary.first == .move(P(3.5, 0)))
    }

    @Test("incremental and batch give identical geometry")
    func incrementalEqualsBatch() {
        for doc in [syntheticDocument(), syntheticDocument(strokes: 7, perStroke: 3),
                    syntheticDocument(strokes: 2, perStroke: 201, pressure: true)] {
            for options in [ReconstructionOptions(), ReconstructionOptions(pressureScalesWidth: true)] {
                var r = SignatureReconstructor(options: options)
                var elements: [PathElement] = []
                for s in doc.strokes {
                    for p in s.points { if let f = r.add(p).finalized { elements += f } }
                    elements += r.endStroke() ?? []
                }
                let batch = SignatureReconstructor.outline(for: doc, options: options)
                #expect(batch.elements == elements)
                #expect(!elements.isEmpty)
            }
        }
    }

    @Test("outline contract: closed subpaths, positive orientation for straight strokes, bounds cover all points")
    func outlineContract() {
        let doc = syntheticDocument()
        let o = doc.outline()
        var open = false
        var subpath: [PathElement] = []
        for e in o.elements {
            switch e {
            case .move:
                #expect(!open)
                open = true
                subpath = [e]
            case .close:
                #expect(open)
                open = false
            default:
                #expect(open)
                subpath.append(e)
            }
        }
        #expect(!open)
        #expect(o.subpathCount > 10)
        // Straight stroke in any direction: every subpath has a positive on-curve area.
        for angle in stride(from: 0.0, to: 6.28, by: 0.7) {
            var r = SignatureReconstructor()
            var parts: [[PathElement]] = []
            for i in 0..<12 {
                let d = Double(i) * 6
                if let f = r.add(P(100 + d * cos(angle), 100 + d * sin(angle))).finalized { parts.append(f) }
            }
            parts.append(r.endStroke()!)
            for part in parts { #expect(onCurveArea(part) > 0) }
        }
        let b = o.bounds
        for e in o.elements {
            if case .move(let p) = e { #expect(p.x >= b.minX && p.x <= b.maxX && p.y >= b.minY && p.y <= b.maxY) }
        }
    }

    @Test("pressure scaling is off by default and narrows low-pressure ink when on")
    func pressureOption() {
        let doc = syntheticDocument(strokes: 1, perStroke: 40, pressure: true)
        var noPressure = doc
        for i in noPressure.strokes[0].points.indices { noPressure.strokes[0].points[i].pressure = nil }
        #expect(doc.outline() == noPressure.outline())
        var light = doc
        for i in light.strokes[0].points.indices { light.strokes[0].points[i].pressure = 0.1 }
        let on = ReconstructionOptions(pressureScalesWidth: true)
        let wide = doc.outline(), thin = light.outline(options: on)
        #expect(thin.bounds.height < wide.bounds.height)
        // Pressure 1 with scaling on is the same as no scaling.
        var full = doc
        for i in full.strokes[0].points.indices { full.strokes[0].points[i].pressure = 1 }
        #expect(full.outline(options: on) == doc.outline())
    }
}
