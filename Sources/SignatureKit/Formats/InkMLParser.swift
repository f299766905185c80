/// Parser for W3C InkML: `<ink>` (with or without the InkML namespace, any prefix),
/// the first `<traceFormat>` in the document (default X, Y), and every pen-down `<trace>`
/// in document order (also inside `<traceGroup>`). Channels X and Y are required; T (time)
/// and F (force/pressure) are optional; other channels are read and dropped.
///
/// Trace values may use the InkML prefixes `!` (explicit), `'` (first difference) and `"`
/// (second difference). `*`, `?` and boolean values are not supported (`invalid_inkml`).
enum InkMLParser {
    struct Channel {
        enum Role { case x, y, t, f, other }
        var role: Role
        var timeFactor: Double = 1   // to milliseconds
        var max: Double? = nil
    }

    struct RawTrace {
        var values: [Double] = []    // channels interleaved
    }

    static func parse(_ p: UnsafePointer<UInt8>, count: Int, limits: InkLimits,
                      normalization: NormalizationOptions) throws(InkError) -> InkDocument {
        var r = XMLReader(p, count: count, maxDepth: limits.maxNestingDepth)
        var channels: [Channel] = []
        var inTraceFormat = false
        var formatSeen = false
        var frozen: [Channel]? = nil
        var traces: [RawTrace] = []
        var totalPoints = 0
        var rootChecked = false
        var text: [UInt8] = []
        var inTrace = false
        var traceIsPenUp = false
        var traceOffset = 0

        while true {
            let event = try r.next()
            switch event {
            case .eof:
                guard let channelsUsed = frozen else {
                    // No traces at all: an empty document, which validation reports as blank.
                    return InkDocument(canvas: CanvasSize(width: normalization.canvasWidth,
                                                          height: normalization.minCanvasHeight), strokes: [])
                }
                return try build(traces, channels: channelsUsed, limits: limits, normalization: normalization)
            case .start(let name, let attributes, _):
                if !rootChecked {
                    rootChecked = true
                    guard r.equals(name, "ink") else {
                        throw InkError(.invalidInkML, "root element is <\(r.string(name))>, not <ink>", offset: name.lowerBound,
                                       line: r.lineNumber(at: name.lowerBound))
                    }
                    continue
                }
                if inTrace {
                    throw r.error("element <\(r.string(name))> inside <trace>", at: name.lowerBound, code: .invalidInkML)
                }
                if r.equals(name, "traceFormat") {
                    if !formatSeen && frozen == nil { inTraceFormat = true }
                } else if r.equals(name, "intermittentChannels") && inTraceFormat {
                    throw r.error("intermittent channels are not supported", at: name.lowerBound, code: .invalidInkML)
                } else if r.equals(name, "channel") && inTraceFormat {
                    guard let n = r.attribute(attributes, "name") else {
                        throw r.error("<channel> without a name", at: name.lowerBound, code: .invalidInkML)
                    }
                    var ch = Channel(role: .other)
                    if r.equals(n, "X") { ch.role = .x }
                    else if r.equals(n, "Y") { ch.role = .y }
                    else if r.equals(n, "T") { ch.role = .t }
                    else if r.equals(n, "F") { ch.role = .f }
                    if ch.role == .t, let u = r.attribute(attributes, "units") {
                        if r.equals(u, "s") { ch.timeFactor = 1000 }
                        else if r.equals(u, "ms") { ch.timeFactor = 1 }
                        else if r.equals(u, "us") || r.equals(u, "µs") { ch.timeFactor = 0.001 }
                        else {
                            throw r.error("unsupported time unit \"\(r.string(u))\"", at: u.lowerBound, code: .invalidInkML)
                        }
                    }
                    if ch.role == .f, let m = r.attribute(attributes, "max") {
                        var j = m.lowerBound
                        if j < m.upperBound, case .value(let v) = NumberScanner.scan(r.p, &j, m.upperBound, json: false),
                           j == m.upperBound, v.isFinite, v > 0 {
                            ch.max = v
                        }
                    }
                    for c in channels where c.role == ch.role && ch.role != .other {
                        throw r.error("channel \(r.string(n)) declared twice", at: name.lowerBound, code: .invalidInkML)
                    }
                    channels.append(ch)
                } else if r.equals(name, "trace") {
                    if frozen == nil {
                        let used = formatSeen ? channels : [Channel(role: .x), Channel(role: .y)]
                        guard used.contains(where: { $0.role == .x }), used.contains(where: { $0.role == .y }) else {
                            throw r.error("the traceFormat has no X and Y channels", at: name.lowerBound, code: .invalidInkML)
                        }
                        frozen = used
                    }
                    inTrace = true
                    text.removeAll(keepingCapacity: true)
                    traceOffset = name.lowerBound
                    traceIsPenUp = false
                    if let t = r.attribute(attributes, "type"), r.equals(t, "penUp") { traceIsPenUp = true }
                }
            case .end(let name):
                if r.equals(name, "traceFormat") && inTraceFormat {
                    inTraceFormat = false
                    formatSeen = true
                } else if r.equals(name, "trace") && inTrace {
                    inTrace = false
                    if traceIsPenUp { continue }
                    let chans = frozen!
                    var trace = RawTrace()
                    try parseTrace(text, channels: chans, into: &trace, stroke: traces.count,
                                   reader: r, traceOffset: traceOffset)
                    let n = trace.values.count / chans.count
                    if n == 0 { continue }  // empty traces are skipped
                    if traces.count >= limits.maxStrokes {
                        throw InkError(.tooManyStrokes, "more than \(limits.maxStrokes) strokes", stroke: traces.count,
                                       offset: traceOffset, line: r.lineNumber(at: traceOffset))
                    }
                    totalPoints += n
                    if totalPoints > limits.maxPoints {
                        throw InkError(.tooManyPoints, "more than \(limits.maxPoints) points", stroke: traces.count,
                                       offset: traceOffset, line: r.lineNumber(at: traceOffset))
                    }
                    traces.append(trace)
                }
            case .text(let range):
                if inTrace { try r.decodeText(range, into: &text) }
            case .cdata(let range):
                if inTrace { for k in range { text.append(r.p[k]) } }
            }
        }
    }

    /// Parses trace text `v v v, v v v, ...` into interleaved channel values.
    static func parseTrace(_ text: [UInt8], channels: [Channel], into trace: inout RawTrace, stroke: Int,
                           reader: XMLReader, traceOffset: Int) throws(InkError) {
        let nc = channels.count
        var mode = [UInt8](repeating: 0, count: nc)       // 0 explicit, 1 first diff, 2 second diff
        var last = [Double](repeating: 0, count: nc)
        var velocity = [Double](repeating: 0, count: nc)
        var pointIndex = 0
        var channel = 0
        func fail(_ message: String) -> InkError {
            InkError(.invalidInkML, message, stroke: stroke, point: pointIndex, offset: traceOffset,
                     line: reader.lineNumber(at: traceOffset))
        }
        let result: InkError? = text.withUnsafeBufferPointer { buf -> InkError? in
            guard let p = buf.baseAddress else { return nil }
            let end = buf.count
            var i = 0
            while true {
                while i < end && XMLReader.isSpace(p[i]) { i += 1 }
                if i >= end { break }
                let c = p[i]
                if c == UInt8(ascii: ",") {
                    if channel != nc { return fail("point has \(channel) values, the traceFormat has \(nc) channels") }
                    channel = 0
                    pointIndex += 1
                    i += 1
                    continue
                }
                if channel >= nc { return fail("point has more values than the \(nc) channels") }
                if c == UInt8(ascii: "!") { mode[channel] = 0; i += 1 }
                else if c == UInt8(ascii: "'") { mode[channel] = 1; i += 1 }
                else if c == UInt8(ascii: "\"") { mode[channel] = 2; i += 1 }
                while i < end && XMLReader.isSpace(p[i]) { i += 1 }
                guard i < end else { return fail("value missing after a difference prefix") }
                let start = i
                guard case .value(let v) = NumberScanner.scan(p, &i, end, json: false) else {
                    let ch = Character(Unicode.Scalar(p[start]))
                    return fail("unsupported or malformed trace value starting with '\(ch)'")
                }
                if !v.isFinite {
                    return InkError(.notFinite, "trace value is not finite", stroke: stroke, point: pointIndex,
                                    offset: traceOffset, line: reader.lineNumber(at: traceOffset))
                }
                var value: Double
                switch mode[channel] {
                case 0:
                    value = v
                    velocity[channel] = pointIndex == 0 ? 0 : v - last[channel]
                case 1:
                    velocity[channel] = v
                    value = last[channel] + v
                default:
                    velocity[channel] += v
                    value = last[channel] + velocity[channel]
                }
                last[channel] = value
                trace.values.append(value)
                channel += 1
            }
            if channel != 0 && channel != nc { return fail("point has \(channel) values, the traceFormat has \(nc) channels") }
            if channel == 0 && pointIndex > 0 { return fail("trailing ',' in trace") }
            return nil
        }
        if let result { throw result }
    }

    static func build(_ traces: [RawTrace], channels: [Channel], limits: InkLimits,
                      normalization: NormalizationOptions) throws(InkError) -> InkDocument {
        let nc = channels.count
        let xi = channels.firstIndex { $0.role == .x }!
        let yi = channels.firstIndex { $0.role == .y }!
        let ti = channels.firstIndex { $0.role == .t }
        let fi = channels.firstIndex { $0.role == .f }
        var pressureScale = 1.0
        if let fi {
            if let m = channels[fi].max {
                pressureScale = 1 / m
            } else {
                var observed = 0.0
                for tr in traces {
                    var k = fi
                    while k < tr.values.count { observed = Swift.max(observed, tr.values[k]); k += nc }
                }
                if observed > 1 { pressureScale = 1 / observed }
            }
        }
        var raw: [[RawPoint]] = []
        raw.reserveCapacity(traces.count)
        var t0: Double? = nil
        var index = 0
        for tr in traces {
            let n = tr.values.count / nc
            var pts: [RawPoint] = []
            pts.reserveCapacity(n)
            for k in 0..<n {
                let b = k * nc
                var t: Double
                if let ti {
                    let v = tr.values[b + ti] * channels[ti].timeFactor
                    let base = t0 ?? v
                    t0 = base
                    t = v - base
                } else {
                    t = Double(index) * 10
                }
                index += 1
                let f = fi.map { tr.values[b + $0] * pressureScale }
                pts.append(RawPoint(x: tr.values[b + xi], y: tr.values[b + yi], t: t, pressure: f))
            }
            raw.append(pts)
        }
        return Normalizer.normalize(raw, flipY: false, options: normalization)
    }
}
