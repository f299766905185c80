import Foundation
import SignatureKit

// Shared by the SignatureKit and SignatureRender tests (a library target, as test targets cannot
// depend on each other).

/// A smooth synthetic signature (no corpus needed): `strokes` strokes of `perStroke` points.
public func syntheticDocument(strokes: Int = 5, perStroke: Int = 60, pressure: Bool = false) -> InkDocument {
    var out: [Stroke] = []
    var t = 0.0
    for s in 0..<strokes {
        var pts: [InkPoint] = []
        for i in 0..<perStroke {
            let a = Double(i) / Double(perStroke) * 2 * Double.pi
            let x = 40 + Double(s) * 100 + Double(i) * 1.2 + 25 * sin(a * 2 + Double(s))
            let y = 100 + 50 * sin(a * 3) * cos(Double(s) * 0.7)
            pts.append(InkPoint(x: x, y: y, t: t, pressure: pressure ? 0.5 + 0.4 * sin(a) : nil))
            t += 8
        }
        t += 150
        out.append(Stroke(points: pts))
    }
    return InkDocument(canvas: CanvasSize(width: 600, height: 200), strokes: out)
}
