/// Checks an ``InkDocument`` against ``InkLimits``. All parsers call this before returning;
/// call it yourself for documents built in code.
public enum InkValidator {
    /// Throws the first problem found, in this order: canvas (`not_finite`, `invalid_canvas`,
    /// `canvas_too_large`), `too_many_strokes`, `too_many_points`, then per point in order
    /// (`empty_stroke`, `not_finite`, `out_of_canvas`, `pressure_out_of_range`,
    /// `time_backwards`), and finally `blank_signature`.
    public static func validate(_ doc: InkDocument, limits: InkLimits = .default) throws(InkError) {
        let c = doc.canvas
        guard c.width.isFinite, c.height.isFinite else {
            throw InkError(.notFinite, "canvas size is not finite")
        }
        guard c.width > 0, c.height > 0 else {
            throw InkError(.invalidCanvas, "canvas must have a positive width and height, got \(c.width)×\(c.height)")
        }
        guard c.width <= limits.maxCanvasDimension, c.height <= limits.maxCanvasDimension else {
            throw InkError(.canvasTooLarge, "canvas \(c.width)×\(c.height) exceeds \(limits.maxCanvasDimension) units")
        }
        if doc.strokes.count > limits.maxStrokes {
            throw InkError(.tooManyStrokes, "\(doc.strokes.count) strokes exceed the limit of \(limits.maxStrokes)")
        }
        let total = doc.pointCount
        if total > limits.maxPoints {
            throw InkError(.tooManyPoints, "\(total) points exceed the limit of \(limits.maxPoints)")
        }
        let tolX = c.width * limits.outOfCanvasTolerance
        let tolY = c.height * limits.outOfCanvasTolerance
        let minX = -tolX, maxX = c.width + tolX, minY = -tolY, maxY = c.height + tolY
        var lastT: Double? = nil
        var minIX = Double.infinity, maxIX = -Double.infinity, minIY = Double.infinity, maxIY = -Double.infinity
        for (si, stroke) in doc.strokes.enumerated() {
            if stroke.points.isEmpty {
                throw InkError(.emptyStroke, "stroke has no points", stroke: si)
            }
            for (pi, p) in stroke.points.enumerated() {
                guard p.x.isFinite, p.y.isFinite, p.t.isFinite else {
                    throw InkError(.notFinite, "coordinate or time is not finite", stroke: si, point: pi)
                }
                if p.x < minX || p.x > maxX || p.y < minY || p.y > maxY {
                    throw InkError(.outOfCanvas,
                                   "point (\(p.x), \(p.y)) is outside the \(c.width)×\(c.height) canvas by more than \(limits.outOfCanvasTolerance * 100)%",
                                   stroke: si, point: pi)
                }
                if let pr = p.pressure {
                    guard pr.isFinite else { throw InkError(.notFinite, "pressure is not finite", stroke: si, point: pi) }
                    guard pr >= 0, pr <= 1 else {
                        throw InkError(.pressureOutOfRange, "pressure \(pr) is outside 0...1", stroke: si, point: pi)
                    }
                }
                if let lastT, p.t < lastT - limits.backwardsTimeTolerance {
                    throw InkError(.timeBackwards,
                                   "time goes back \(lastT - p.t) ms (tolerance \(limits.backwardsTimeTolerance) ms)",
                                   stroke: si, point: pi)
                }
                // Track the latest time so a run of small backward steps cannot add up.
                lastT = Swift.max(lastT ?? p.t, p.t)
                minIX = Swift.min(minIX, p.x); maxIX = Swift.max(maxIX, p.x)
                minIY = Swift.min(minIY, p.y); maxIY = Swift.max(maxIY, p.y)
            }
        }
        guard limits.rejectBlank else { return }
        if total == 0 {
            throw InkError(.blankSignature, "the signature has no ink")
        }
        if total < limits.minPoints {
            throw InkError(.blankSignature, "only \(total) point\(total == 1 ? "" : "s"); at least \(limits.minPoints) are required")
        }
        let extent = Swift.max(maxIX - minIX, maxIY - minIY)
        let needed = Swift.max(c.width, c.height) * limits.minInkExtentFraction
        if extent < needed {
            throw InkError(.blankSignature,
                           "the ink spans only \(Formatting.fixed(extent, decimals: 1)) units; at least \(Formatting.fixed(needed, decimals: 1)) are required for this canvas")
        }
    }
}
