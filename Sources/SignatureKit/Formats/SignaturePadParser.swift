/// Parser for signature_pad's `toData()` JSON: an array of stroke groups, each either an
/// object `{"points": [{x, y, time, pressure?}, ...], penColor, ...}` (v3+) or a bare array of
/// point objects (v1/v2). Other members are ignored.
enum SignaturePadParser {
    static func parse(_ p: UnsafePointer<UInt8>, count: Int, canvas: CanvasSize?, limits: InkLimits) throws(InkError) -> InkDocument {
        var s = JSONScanner(p, count: count, maxDepth: limits.maxNestingDepth)
        s.skipWhitespace()
        guard s.peek() == UInt8(ascii: "[") else {
            throw InkError(.invalidJSON, "signature_pad data must be a JSON array, found \(s.describeByte(at: s.pos))", offset: s.pos)
        }
        s.pos += 1
        var strokes: [Stroke] = []
        var total = 0
        var t0: Double? = nil
        var firstGroup = true
        while try s.nextElement(&firstGroup) {
            let si = strokes.count
            if si >= limits.maxStrokes {
                throw InkError(.tooManyStrokes, "more than \(limits.maxStrokes) strokes", stroke: si, offset: s.pos)
            }
            var points: [InkPoint] = []
            if s.peek() == UInt8(ascii: "{") {
                s.pos += 1
                var sawPoints = false
                var first = true
                while let key = try s.nextMember(&first) {
                    if s.equals(key, "points") {
                        if sawPoints { throw InkError(.duplicateField, "\"points\" appears twice", stroke: si, offset: key.start) }
                        sawPoints = true
                        try parsePointArray(&s, into: &points, stroke: si, total: &total, t0: &t0, limits: limits, depth: 2)
                    } else {
                        try s.skipValue(depth: 2)
                    }
                }
                if !sawPoints { throw InkError(.missingField, "stroke group has no \"points\"", stroke: si) }
            } else if s.peek() == UInt8(ascii: "[") {
                try parsePointArray(&s, into: &points, stroke: si, total: &total, t0: &t0, limits: limits, depth: 1)
            } else {
                throw InkError(.wrongType, "a stroke group must be an object or an array, found \(s.describeByte(at: s.pos))",
                               stroke: si, offset: s.pos)
            }
            strokes.append(Stroke(points: points))
        }
        try s.expectEnd()
        let size = canvas ?? inferCanvas(strokes)
        return InkDocument(canvas: size, strokes: strokes)
    }

    /// Without a caller-supplied canvas, assume the smallest canvas anchored at the origin that
    /// holds the ink with the same margin right/bottom as left/top.
    static func inferCanvas(_ strokes: [Stroke]) -> CanvasSize {
        let doc = InkDocument(canvas: CanvasSize(width: 0, height: 0), strokes: strokes)
        guard let b = doc.inkBounds else { return CanvasSize(width: 1, height: 1) }
        let w = b.maxX + Swift.max(b.minX, 0)
        let h = b.maxY + Swift.max(b.minY, 0)
        return CanvasSize(width: (Swift.max(w, 1)).rounded(.up), height: (Swift.max(h, 1)).rounded(.up))
    }

    static func parsePointArray(_ s: inout JSONScanner, into points: inout [InkPoint], stroke si: Int,
                                total: inout Int, t0: inout Double?, limits: InkLimits, depth: Int) throws(InkError) {
        guard s.peek() == UInt8(ascii: "[") else {
            throw InkError(.wrongType, "\"points\" must be an array, found \(s.describeByte(at: s.pos))", stroke: si, offset: s.pos)
        }
        s.pos += 1
        var first = true
        while try s.nextElement(&first) {
            let pi = points.count
            total += 1
            if total > limits.maxPoints {
                throw InkError(.tooManyPoints, "more than \(limits.maxPoints) points", stroke: si, point: pi, offset: s.pos)
            }
            guard s.peek() == UInt8(ascii: "{") else {
                throw InkError(.wrongType, "a point must be an object {x, y, time}, found \(s.describeByte(at: s.pos))",
                               stroke: si, point: pi, offset: s.pos)
            }
            s.pos += 1
            var x: Double? = nil, y: Double? = nil, time: Double? = nil, pressure: Double? = nil
            var firstMember = true
            while let key = try s.nextMember(&firstMember) {
                if s.equals(key, "x") {
                    x = try s.readNumber(stroke: si, point: pi, what: "x")
                } else if s.equals(key, "y") {
                    y = try s.readNumber(stroke: si, point: pi, what: "y")
                } else if s.equals(key, "time") {
                    time = try s.readNumber(stroke: si, point: pi, what: "time")
                } else if s.equals(key, "pressure") {
                    if s.peek() == UInt8(ascii: "n") { try s.literal("null") } else {
                        pressure = try s.readNumber(stroke: si, point: pi, what: "pressure")
                    }
                } else {
                    try s.skipValue(depth: depth + 2)
                }
            }
            guard let x else { throw InkError(.missingField, "point has no \"x\"", stroke: si, point: pi) }
            guard let y else { throw InkError(.missingField, "point has no \"y\"", stroke: si, point: pi) }
            guard let time else { throw InkError(.missingField, "point has no \"time\"", stroke: si, point: pi) }
            let base = t0 ?? time
            t0 = base
            points.append(InkPoint(x: x, y: y, t: time - base, pressure: pressure))
        }
    }
}
