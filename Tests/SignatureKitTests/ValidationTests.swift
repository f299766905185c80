import Foundation
import Testing
import InkTestSupport
import SignatureKit

/// One malformed input and the error it must produce.
struct Malformed: Sendable, CustomTestStringConvertible {
    var name: String
    var input: String
    var format: InkFormat?
    var code: InkError.Code
    var stroke: Int? = nil
    var point: Int? = nil
    var limits: InkLimits = .default

    var testDescription: String { "\(name) -> \(code.rawValue)" }
}

private let canvas = #""canvas":{"width":600,"height":200}"#
/// `n` well-formed points, one stroke, spread over the canvas.
private func pts(_ n: Int = 12, from: Int = 0) -> String {
    (from..<(from + n)).map { "[\(20 + $0 * 10),\($0 % 2 == 0 ? 50 : 120),\($0 * 10)]" }.joined(separator: ",")
}
private let svcRows = (0..<12).map { "\(1000 + $0 * 300) \(5000 + ($0 % 3) * 400) \(31000000 + $0 * 10) \($0 == 0 ? 0 : 1)" }
private let svcBody = svcRows.joined(separator: "\n")
private func padPoint(_ i: Int, x: String? = nil) -> String {
    #"{"x":\#(x ?? String(10 + i * 20)),"y":\#(i % 2 == 0 ? 30 : 120),"time":\#(1000 + i * 16)}"#
}
private let padPoints = (0..<12).map { padPoint($0) }.joined(separator: ",")

private let strictPoints: InkLimits = { var l = InkLimits(); l.maxPoints = 20; return l }()
private let strictStrokes: InkLimits = { var l = InkLimits(); l.maxStrokes = 2; return l }()
private let padCanvas = CanvasSize(width: 400, height: 200)

let malformedTable: [Malformed] = [
    // --- native ink JSON ---
    Malformed(name: "empty", input: "  \n ", format: nil, code: .emptyInput),
    Malformed(name: "not any format", input: "hello", format: nil, code: .unsupportedFormat),
    Malformed(name: "truncated JSON", input: "{\(canvas),\"strokes\":[[[1,2,3]", format: .ink, code: .invalidJSON),
    Malformed(name: "trailing garbage", input: "{\(canvas),\"strokes\":[[\(pts())]]} x", format: .ink, code: .invalidJSON),
    Malformed(name: "leading zero", input: "{\(canvas),\"strokes\":[[[01,2,3]]]}", format: .ink, code: .invalidJSON),
    Malformed(name: "bad escape", input: #"{"canv\q":1}"#, format: .ink, code: .invalidJSON),
    Malformed(name: "missing canvas", input: "{\"strokes\":[[\(pts())]]}", format: .ink, code: .missingField),
    Malformed(name: "missing height", input: "{\"canvas\":{\"width\":600},\"strokes\":[[\(pts())]]}", format: .ink, code: .missingField),
    Malformed(name: "duplicate strokes", input: "{\(canvas),\"strokes\":[],\"strokes\":[]}", format: .ink, code: .duplicateField),
    Malformed(name: "wrong format tag", input: "{\"format\":\"countersign.ink/v2\",\(canvas),\"strokes\":[]}", format: .ink, code: .unsupportedFormat),
    Malformed(name: "string coordinate", input: "{\(canvas),\"strokes\":[[\(pts(3)),[\"1\",2,3]]]}", format: .ink, code: .wrongType, stroke: 0, point: 3),
    Malformed(name: "strokes not an array", input: "{\(canvas),\"strokes\":{}}", format: .ink, code: .wrongType),
    Malformed(name: "two-element point", input: "{\(canvas),\"strokes\":[[\(pts(2)),[1,2]]]}", format: .ink, code: .invalidPoint, stroke: 0, point: 2),
    Malformed(name: "five-element point", input: "{\(canvas),\"strokes\":[[[1,2,3,0.5,9]]]}", format: .ink, code: .invalidPoint, stroke: 0, point: 0),
    Malformed(name: "huge number", input: "{\(canvas),\"strokes\":[[\(pts(4)),[1e999,2,50]]]}", format: .ink, code: .notFinite, stroke: 0, point: 4),
    Malformed(name: "zero canvas", input: "{\"canvas\":{\"width\":0,\"height\":200},\"strokes\":[[\(pts())]]}", format: .ink, code: .invalidCanvas),
    Malformed(name: "canvas too large", input: "{\"canvas\":{\"width\":20000,\"height\":200},\"strokes\":[[\(pts())]]}", format: .ink, code: .canvasTooLarge),
    Malformed(name: "far outside canvas", input: "{\(canvas),\"strokes\":[[\(pts(5)),[900,50,60],\(pts(5, from: 7))]]}", format: .ink, code: .outOfCanvas, stroke: 0, point: 5),
    Malformed(name: "time backwards", input: "{\(canvas),\"strokes\":[[\(pts(6)),[300,50,-100],\(pts(5, from: 7))]]}", format: .ink, code: .timeBackwards, stroke: 0, point: 6),
    Malformed(name: "time backwards across a pen lift", input: "{\(canvas),\"strokes\":[[\(pts(12))],[[300,50,0],[350,60,10],[400,70,20]]]}", format: .ink, code: .timeBackwards, stroke: 1, point: 0),
    Malformed(name: "pressure above 1", input: "{\(canvas),\"strokes\":[[\(pts(3)),[60,50,40,1.5],\(pts(8, from: 4))]]}", format: .ink, code: .pressureOutOfRange, stroke: 0, point: 3),
    Malformed(name: "empty stroke", input: "{\(canvas),\"strokes\":[[\(pts())],[]]}", format: .ink, code: .emptyStroke, stroke: 1),
    Malformed(name: "too many points", input: "{\(canvas),\"strokes\":[[\(pts(25))]]}", format: .ink, code: .tooManyPoints, limits: strictPoints),
    Malformed(name: "too many strokes", input: "{\(canvas),\"strokes\":[[\(pts(4))],[\(pts(4, from: 4))],[\(pts(4, from: 8))]]}", format: .ink, code: .tooManyStrokes, stroke: 2, limits: strictStrokes),
    Malformed(name: "no strokes", input: "{\(canvas),\"strokes\":[]}", format: .ink, code: .blankSignature),
    Malformed(name: "too few points", input: "{\(canvas),\"strokes\":[[\(pts(4))]]}", format: .ink, code: .blankSignature),
    Malformed(name: "a single dot", input: "{\(canvas),\"strokes\":[[" + (0..<15).map { "[300,100,\($0 * 10)]" }.joined(separator: ",") + "]]}", format: .ink, code: .blankSignature),
    Malformed(name: "tiny smudge", input: "{\(canvas),\"strokes\":[[" + (0..<15).map { "[\(300 + $0),\(100 + $0 % 3),\($0 * 10)]" }.joined(separator: ",") + "]]}", format: .ink, code: .blankSignature),
    Malformed(name: "deep nesting in an unknown member", input: "{\"x\":" + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + ",\(canvas),\"strokes\":[]}", format: .ink, code: .nestingTooDeep),
    // --- signature_pad ---
    Malformed(name: "pad: not an array", input: "{\"points\":[]}", format: .signaturePad(canvas: padCanvas), code: .invalidJSON),
    Malformed(name: "pad: group without points", input: "[{\"penColor\":\"black\"}]", format: .signaturePad(canvas: padCanvas), code: .missingField, stroke: 0),
    Malformed(name: "pad: point without time", input: "[{\"points\":[\(padPoints),{\"x\":1,\"y\":2}]}]", format: .signaturePad(canvas: padCanvas), code: .missingField, stroke: 0, point: 12),
    Malformed(name: "pad: x is a string", input: "[{\"points\":[\(padPoint(0, x: "\"10\""))]}]", format: .signaturePad(canvas: padCanvas), code: .wrongType, stroke: 0, point: 0),
    Malformed(name: "pad: point outside the caller's canvas", input: "[{\"points\":[\(padPoints),\(padPoint(12, x: "2000"))]}]", format: .signaturePad(canvas: padCanvas), code: .outOfCanvas, stroke: 0, point: 12),
    Malformed(name: "pad: group is a number", input: "[42]", format: .signaturePad(canvas: padCanvas), code: .wrongType, stroke: 0),
    // --- InkML ---
    Malformed(name: "inkml: DOCTYPE", input: "<?xml version=\"1.0\"?><!DOCTYPE ink [<!ENTITY a \"aaaa\">]><ink><trace>&a;</trace></ink>", format: nil, code: .dtdForbidden),
    Malformed(name: "inkml: ENTITY inside", input: "<ink><!ENTITY x \"y\"><trace>1 2</trace></ink>", format: .inkml, code: .dtdForbidden),
    Malformed(name: "inkml: mismatched tags", input: "<ink><trace>1 2, 3 4</traces></ink>", format: .inkml, code: .invalidXML),
    Malformed(name: "inkml: unclosed root", input: "<ink><trace>1 2, 3 4</trace>", format: .inkml, code: .invalidXML),
    Malformed(name: "inkml: undeclared entity", input: "<ink><trace>1 2&bogus; 3</trace></ink>", format: .inkml, code: .invalidXML),
    Malformed(name: "inkml: wrong root", input: "<svg><trace>1 2</trace></svg>", format: .inkml, code: .invalidInkML),
    Malformed(name: "inkml: no Y channel", input: "<ink><traceFormat><channel name=\"X\"/><channel name=\"T\"/></traceFormat><trace>1 2</trace></ink>", format: .inkml, code: .invalidInkML),
    Malformed(name: "inkml: wrong value count", input: "<ink><trace>1 2, 3 4 5, 6 7</trace></ink>", format: .inkml, code: .invalidInkML, stroke: 0, point: 1),
    Malformed(name: "inkml: non-numeric value", input: "<ink><trace>1 2, 3 4</trace><trace>1 2, x 4</trace></ink>", format: .inkml, code: .invalidInkML, stroke: 1, point: 1),
    Malformed(name: "inkml: deep nesting", input: "<ink>" + String(repeating: "<g>", count: 1000) + String(repeating: "</g>", count: 1000) + "</ink>", format: .inkml, code: .nestingTooDeep),
    Malformed(name: "inkml: no traces", input: "<ink xmlns=\"http://www.w3.org/2003/InkML\"></ink>", format: nil, code: .blankSignature),
    Malformed(name: "inkml: time backwards", input: "<ink><traceFormat><channel name=\"X\"/><channel name=\"Y\"/><channel name=\"T\"/></traceFormat><trace>" + (0..<12).map { "\($0 * 30) \($0 % 2 * 80) \($0 == 6 ? 0 : 1000 + $0 * 10)" }.joined(separator: ",") + "</trace></ink>", format: .inkml, code: .timeBackwards, stroke: 0, point: 6),
    // --- SVC2004 ---
    Malformed(name: "svc: count mismatch", input: "13\n" + svcBody, format: .svc2004, code: .invalidSVC),
    Malformed(name: "svc: no header", input: svcBody, format: .svc2004, code: .invalidSVC),
    Malformed(name: "svc: five columns", input: "12\n" + svcRows.map { $0 + " 7" }.joined(separator: "\n"), format: .svc2004, code: .invalidSVC),
    Malformed(name: "svc: mixed columns", input: "12\n" + svcRows.enumerated().map { $0.offset == 5 ? $0.element + " 1 2 3" : $0.element }.joined(separator: "\n"), format: .svc2004, code: .invalidSVC),
    Malformed(name: "svc: letter in a row", input: "12\n" + svcBody.replacingOccurrences(of: "1600", with: "16x0"), format: .svc2004, code: .invalidSVC),
    Malformed(name: "svc: time backwards", input: "12\n" + svcRows.enumerated().map { $0.offset == 8 ? "3400 5000 30999000 1" : $0.element }.joined(separator: "\n"), format: .svc2004, code: .timeBackwards, stroke: 0, point: 8),
    Malformed(name: "svc: too few points", input: "3\n" + svcRows.prefix(3).joined(separator: "\n"), format: nil, code: .blankSignature),
    Malformed(name: "svc: a dot", input: "12\n" + (0..<12).map { "5000 5000 \(31000000 + $0 * 10) 1" }.joined(separator: "\n"), format: .svc2004, code: .blankSignature),
]

@Suite("Validation errors")
struct ValidationTests {
    @Test("each malformed document gives its intended error", arguments: malformedTable)
    func malformed(_ m: Malformed) {
        let e = inkError { try InkParser(limits: m.limits).parse(m.input, format: m.format) }
        #expect(e?.code == m.code, "\(m.name): got \(e.map(String.init(describing:)) ?? "no error")")
        if let s = m.stroke { #expect(e?.stroke == s, "\(m.name): stroke") }
        if let p = m.point { #expect(e?.point == p, "\(m.name): point") }
        #expect(!(e?.message.isEmpty ?? true))
    }

    @Test("the table covers all four formats and at least 20 cases")
    func tableSize() {
        #expect(malformedTable.count >= 20)
        let formats = Set(malformedTable.compactMap { $0.format?.kind })
        #expect(formats == Set(InkFormatKind.allCases))
    }

    @Test("every prefix of valid documents fails cleanly with an InkError (no crash)")
    func truncations() throws {
        let inputs: [(String, InkFormat?)] = [
            (InkSerializer.string(syntheticDocument(strokes: 2, perStroke: 8, pressure: true)), .ink),
            (#"[{"points":[{"x":1,"y":2,"time":3,"pressure":0.5},{"x":"\u00e9","y":2,"time":3}]}]"#, .signaturePad(canvas: CanvasSize(width: 100, height: 100))),
            ("<?xml version=\"1.0\"?><ink><!-- c --><traceFormat><channel name=\"X\"/><channel name=\"Y\"/></traceFormat><trace><![CDATA[1 2]]>, 3 4</trace></ink>", .inkml),
            ("3\r\n1 2 3 0 4 5 6\r\n7 8 9 1 4 5 6\r\n", .svc2004),
        ]
        for (text, format) in inputs {
            let bytes = Array(text.utf8)
            for n in 0..<bytes.count {
                let e = inkError { try InkParser().parse(bytes[0..<n], format: format) }
                #expect(e != nil, "prefix of \(n) bytes unexpectedly parsed")
            }
        }
    }

    @Test("hostile inputs: deep arrays as points, enormous numbers, huge exponents, long digit runs")
    func hostile() {
        let deep = "{\(canvas),\"strokes\":" + String(repeating: "[", count: 100_000) + "}"
        #expect(inkError { try InkParser().parse(deep) }?.code == .wrongType)
        let longDigits = "{\(canvas),\"strokes\":[[[" + String(repeating: "9", count: 5000) + ",1,1]]]}"
        #expect(inkError { try InkParser().parse(longDigits) }?.code == .invalidJSON)
        for bad in ["-.5", "1.", "1e", "--1", "+1", "0x10", "1.5.5"] {
            let text = "{\(canvas),\"strokes\":[[\(pts(11)),[\(bad),100,200]]]}"
            #expect(inkError { try InkParser().parse(text) }?.code == .invalidJSON, "\(bad)")
        }
        let hugeExp = "{\(canvas),\"strokes\":[[[1e99999999999999999999,1,1]]]}"
        #expect(inkError { try InkParser().parse(hugeExp) }?.code == .notFinite)
        let tinyExp = "{\(canvas),\"strokes\":[[\(pts(11)),[1e-99999999999,100,200]]]}"
        #expect(inkError { try InkParser().parse(tinyExp) } == nil)
        let deepXML = String(repeating: "<a>", count: 100_000)
        #expect(inkError { try InkParser().parse(deepXML) }?.code == .invalidInkML)
        let deepInk = "<ink>" + String(repeating: "<a>", count: 100_000)
        #expect(inkError { try InkParser().parse(deepInk) }?.code == .nestingTooDeep)
        var small = InkLimits()
        small.maxInputBytes = 100
        #expect(inkError { try InkParser(limits: small).parse(String(repeating: " ", count: 101)) }?.code == .inputTooLarge)
    }

    @Test("InkML: 80,000 attributes on one element parse, and a repeated one among them is refused (issue 20)")
    func manyAttributes() throws {
        let attributes = (0..<80_000).map { " a\($0)=\"1\"" }.joined()
        let traces = "<trace>0 0, 100 50, 200 0, 300 50, 400 0</trace><trace>10 10,20 20,30 30,40 40,50 50</trace></ink>"
        let doc = try InkParser().parse("<ink" + attributes + ">" + traces, format: .inkml)
        #expect(doc.pointCount == 10)
        let repeated = inkError { try InkParser().parse("<ink" + attributes + " a0=\"2\">" + traces, format: .inkml) }
        #expect(repeated?.code == .invalidXML)
        #expect(repeated?.message == "duplicate attribute a0")
        // Below the set threshold the byte-by-byte comparison still finds a repeat.
        #expect(inkError { try InkParser().parse(#"<ink b="1" a="1" b="2">"# + traces, format: .inkml) }?.code == .invalidXML)
    }

    @Test("limits are configurable: tolerances and blank checks")
    func configurableLimits() throws {
        let jitter = "{\(canvas),\"strokes\":[[\(pts(6)),[300,50,20],\(pts(5, from: 7))]]}"   // 50 -> 20: -30 ms
        #expect(inkError { try InkParser().parse(jitter) } == nil)
        var strict = InkLimits()
        strict.backwardsTimeTolerance = 10
        #expect(inkError { try InkParser(limits: strict).parse(jitter) }?.code == .timeBackwards)
        let edge = "{\(canvas),\"strokes\":[[\(pts(6)),[650,50,60],\(pts(5, from: 7))]]}"    // 50 past the edge, 10 % = 60
        #expect(inkError { try InkParser().parse(edge) } == nil)
        strict.outOfCanvasTolerance = 0
        #expect(inkError { try InkParser(limits: strict).parse(edge) }?.code == .outOfCanvas)
        let few = "{\(canvas),\"strokes\":[[\(pts(4))]]}"
        var lenient = InkLimits()
        lenient.rejectBlank = false
        #expect(try InkParser(limits: lenient).parse(few).pointCount == 4)
        lenient.minPoints = 3
        lenient.rejectBlank = true
        #expect(try InkParser(limits: lenient).parse(few).pointCount == 4)
    }

    @Test("error descriptions name the code and the location")
    func descriptions() {
        let e = InkError(.timeBackwards, "time goes back 60 ms", stroke: 2, point: 17)
        #expect(e.description == "time_backwards (stroke 2, point 17): time goes back 60 ms")
        #expect(Set(InkError.Code.allCases.map(\.rawValue)).count == InkError.Code.allCases.count)
    }
}
