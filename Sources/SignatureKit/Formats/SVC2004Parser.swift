/// Parser for SVC2004 signature text files (Task 1: `x y t button`; Task 2:
/// `x y t button azimuth altitude pressure`).
///
/// The first non-empty line is the point count; every following non-empty line is one sample.
/// A `button` of 0 starts a new stroke (the pen lift itself is not sampled). Tablet y grows
/// upwards, so y is flipped; coordinates are normalised into a canvas about 600 units wide
/// (``NormalizationOptions``); time becomes milliseconds from the first sample; pressure
/// (0...1023) becomes `p / 1023`. LF and CRLF line endings are accepted.
enum SVC2004Parser {
    static func parse(_ p: UnsafePointer<UInt8>, count end: Int, limits: InkLimits,
                      normalization: NormalizationOptions) throws(InkError) -> InkDocument {
        var i = 0
        if end >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { i = 3 }
        var line = 1
        var header: Int? = nil
        var columns: Int? = nil
        var strokes: [[RawPoint]] = []
        var current: [RawPoint] = []
        var total = 0
        var t0 = 0.0
        var values = [Double](repeating: 0, count: 8)

        func fail(_ message: String, _ at: Int) -> InkError {
            InkError(.invalidSVC, message, offset: at, line: line)
        }

        while i < end {
            // One line.
            let lineStart = i
            var n = 0
            while i < end && p[i] != 0x0A {
                let c = p[i]
                if c == 0x20 || c == 0x09 || c == 0x0D { i += 1; continue }
                let tokenStart = i
                guard case .value(let v) = NumberScanner.scan(p, &i, end, json: false), i > tokenStart else {
                    throw fail("expected a number, found '\(Character(Unicode.Scalar(c)))'", tokenStart)
                }
                if i < end, !(p[i] == 0x20 || p[i] == 0x09 || p[i] == 0x0D || p[i] == 0x0A) {
                    throw fail("expected a separator after a number", i)
                }
                if !v.isFinite {
                    throw InkError(.notFinite, "number is not finite", offset: tokenStart, line: line)
                }
                if n >= values.count { throw fail("too many columns", tokenStart) }
                values[n] = v
                n += 1
            }
            if i < end { i += 1 }  // the LF
            defer { line += 1 }
            if n == 0 { continue }
            guard let expected = header else {
                guard n == 1, values[0] >= 0, values[0] == values[0].rounded(), values[0] <= 10_000_000 else {
                    throw fail("the first line must be the point count", lineStart)
                }
                header = Int(values[0])
                continue
            }
            if let columns, columns != n {
                throw fail("row has \(n) columns, earlier rows have \(columns)", lineStart)
            }
            guard n == 4 || n == 7 else {
                throw fail("row has \(n) columns; expected 4 (x y t button) or 7 (x y t button azimuth altitude pressure)", lineStart)
            }
            columns = n
            total += 1
            if total > expected {
                throw fail("more rows than the \(expected) announced in the first line", lineStart)
            }
            if total > limits.maxPoints {
                throw InkError(.tooManyPoints, "more than \(limits.maxPoints) points", offset: lineStart, line: line)
            }
            if total == 1 { t0 = values[2] }
            let button = values[3]
            if button == 0 && !current.isEmpty {
                strokes.append(current)
                current = []
                if strokes.count >= limits.maxStrokes {
                    throw InkError(.tooManyStrokes, "more than \(limits.maxStrokes) strokes", stroke: strokes.count,
                                   offset: lineStart, line: line)
                }
            }
            current.append(RawPoint(x: values[0], y: values[1], t: values[2] - t0,
                                    pressure: n == 7 ? values[6] / 1023 : nil))
        }
        guard let expected = header else {
            throw InkError(.emptyInput, "no SVC2004 data")
        }
        if total != expected {
            throw InkError(.invalidSVC, "the first line announces \(expected) points but \(total) follow", line: line)
        }
        if !current.isEmpty { strokes.append(current) }
        return Normalizer.normalize(strokes, flipY: true, options: normalization)
    }
}
