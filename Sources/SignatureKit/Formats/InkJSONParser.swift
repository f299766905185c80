/// Parser for the native `countersign.ink/v1` JSON format (see `docs/ink-format.md`).
///
/// A hand-written byte scanner: no Foundation, no intermediate tree. Limits on strokes and
/// points are enforced while scanning so a hostile document cannot make it allocate much.
enum InkJSONParser {
    static let formatName = "countersign.ink/v1"

    static func parse(_ p: UnsafePointer<UInt8>, count: Int, limits: InkLimits) throws(InkError) -> InkDocument {
        var s = JSONScanner(p, count: count, maxDepth: limits.maxNestingDepth)
        s.skipWhitespace()
        guard s.peek() == UInt8(ascii: "{") else {
            throw InkError(.invalidJSON, "an ink document must be a JSON object, found \(s.describeByte(at: s.pos))", offset: s.pos)
        }
        s.pos += 1
        var canvas: CanvasSize? = nil
        var strokes: [Stroke]? = nil
        var sawFormat = false
        var first = true
        while let key = try s.nextMember(&first) {
            if s.equals(key, "strokes") {
                if strokes != nil { throw InkError(.duplicateField, "\"strokes\" appears twice", offset: key.start) }
                strokes = try parseStrokes(&s, limits: limits)
            } else if s.equals(key, "canvas") {
                if canvas != nil { throw InkError(.duplicateField, "\"canvas\" appears twice", offset: key.start) }
                canvas = try parseCanvas(&s)
            } else if s.equals(key, "format") {
                if sawFormat { throw InkError(.duplicateField, "\"format\" appears twice", offset: key.start) }
                sawFormat = true
                guard s.peek() == UInt8(ascii: "\"") else {
                    throw InkError(.wrongType, "\"format\" must be a string", offset: s.pos)
                }
                let at = s.pos
                let v = try s.readString()
                let name = s.decode(v)
                if name != formatName {
                    throw InkError(.unsupportedFormat, "format \"\(name.prefix(64))\" is not \(formatName)", offset: at)
                }
            } else {
                // Unknown members are ignored for forward compatibility.
                try s.skipValue(depth: 1)
            }
        }
        try s.expectEnd()
        guard let canvas else { throw InkError(.missingField, "missing \"canvas\"") }
        guard let strokes else { throw InkError(.missingField, "missing \"strokes\"") }
        return InkDocument(canvas: canvas, strokes: strokes)
    }

    static func parseCanvas(_ s: inout JSONScanner) throws(InkError) -> CanvasSize {
        guard s.peek() == UInt8(ascii: "{") else {
            throw InkError(.wrongType, "\"canvas\" must be an object, found \(s.describeByte(at: s.pos))", offset: s.pos)
        }
        s.pos += 1
        var w: Double? = nil, h: Double? = nil
        var first = true
        while let key = try s.nextMember(&first) {
            if s.equals(key, "width") {
                if w != nil { throw InkError(.duplicateField, "\"canvas.width\" appears twice", offset: key.start) }
                w = try s.readNumber(what: "canvas.width")
            } else if s.equals(key, "height") {
                if h != nil { throw InkError(.duplicateField, "\"canvas.height\" appears twice", offset: key.start) }
                h = try s.readNumber(what: "canvas.height")
            } else {
                try s.skipValue(depth: 2)
            }
        }
        guard let w else { throw InkError(.missingField, "missing \"canvas.width\"") }
        guard let h else { throw InkError(.missingField, "missing \"canvas.height\"") }
        return CanvasSize(width: w, height: h)
    }

    static func parseStrokes(_ s: inout JSONScanner, limits: InkLimits) throws(InkError) -> [Stroke] {
        guard s.peek() == UInt8(ascii: "[") else {
            throw InkError(.wrongType, "\"strokes\" must be an array, found \(s.describeByte(at: s.pos))", offset: s.pos)
        }
        s.pos += 1
        var strokes: [Stroke] = []
        var total = 0
        var firstStroke = true
        while try s.nextElement(&firstStroke) {
            let si = strokes.count
            if si >= limits.maxStrokes {
                throw InkError(.tooManyStrokes, "more than \(limits.maxStrokes) strokes", stroke: si, offset: s.pos)
            }
            guard s.peek() == UInt8(ascii: "[") else {
                throw InkError(.wrongType, "a stroke must be an array of points, found \(s.describeByte(at: s.pos))",
                               stroke: si, offset: s.pos)
            }
            s.pos += 1
            var points: [InkPoint] = []
            var firstPoint = true
            while try s.nextElement(&firstPoint) {
                let pi = points.count
                total += 1
                if total > limits.maxPoints {
                    throw InkError(.tooManyPoints, "more than \(limits.maxPoints) points", stroke: si, point: pi, offset: s.pos)
                }
                points.append(try parsePoint(&s, stroke: si, point: pi))
            }
            strokes.append(Stroke(points: points))
        }
        return strokes
    }

    @inline(__always)
    static func parsePoint(_ s: inout JSONScanner, stroke si: Int, point pi: Int) throws(InkError) -> InkPoint {
        let start = s.pos
        guard s.peek() == UInt8(ascii: "[") else {
            throw InkError(.wrongType, "a point must be an array [x, y, t] or [x, y, t, p], found \(s.describeByte(at: s.pos))",
                           stroke: si, point: pi, offset: s.pos)
        }
        s.pos += 1
        var values = (0.0, 0.0, 0.0)
        var pressure: Double? = nil
        var n = 0
        while true {
            s.skipWhitespace()
            if n == 0 {
                if s.peek() == UInt8(ascii: "]") { break }
            } else {
                guard let c = s.peek() else { throw s.error("unexpected end of input") }
                if c == UInt8(ascii: "]") { break }
                guard c == UInt8(ascii: ",") else { throw s.error("expected ',' or ']', found \(s.describeByte(at: s.pos))") }
                s.pos += 1
                s.skipWhitespace()
            }
            switch n {
            case 0: values.0 = try s.readNumber(stroke: si, point: pi, what: "x")
            case 1: values.1 = try s.readNumber(stroke: si, point: pi, what: "y")
            case 2: values.2 = try s.readNumber(stroke: si, point: pi, what: "t")
            case 3:
                if s.peek() == UInt8(ascii: "n") {
                    try s.literal("null")
                } else {
                    pressure = try s.readNumber(stroke: si, point: pi, what: "pressure")
                }
            default:
                throw InkError(.invalidPoint, "a point has more than 4 elements", stroke: si, point: pi, offset: start)
            }
            n += 1
        }
        s.pos += 1
        if n < 3 {
            throw InkError(.invalidPoint, "a point needs at least [x, y, t], found \(n) element\(n == 1 ? "" : "s")",
                           stroke: si, point: pi, offset: start)
        }
        return InkPoint(x: values.0, y: values.1, t: values.2, pressure: pressure)
    }
}
