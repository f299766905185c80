import Foundation
import Testing
import InkTestSupport
import SignatureKit

/// A valid native document with `n` points on one stroke (a zigzag across the canvas).
private func inkJSON(points n: Int = 12, pressure: Bool = false) -> String {
    var pts: [String] = []
    for i in 0..<n {
        let x = 20 + Double(i) * 10, y = i % 2 == 0 ? 50.0 : 120.0
        pts.append(pressure ? "[\(x),\(y),\(i * 10),0.5]" : "[\(x),\(y),\(i * 10)]")
    }
    return #"{"canvas":{"width":600,"height":200},"strokes":[["# + pts.joined(separator: ",") + "]]}"
}

@Suite("Native countersign.ink/v1")
struct InkFormatTests {
    @Test("parses canvas, strokes, optional and null pressure; ignores unknown members")
    func basic() throws {
        let text = #"""
        { "format": "countersign.ink/v1", "extra": {"nested": [1, {"a": null}], "s": "x\"y\u00e9"},
          "canvas": {"width": 600, "height": 200, "dpi": 2},
          "strokes": [ [[10, 20, 0], [30.5, 40.25, 16, 0.5], [50, 60, 32, null], [70, 80, 48], [90, 100, 64]],
                       [[100, 100, 400, 1], [110, 110, 410, 0], [130, 120, 420], [150, 140, 430], [170, 150, 440]] ] }
        """#
        let doc = try InkParser().parse(text)
        #expect(doc.canvas == CanvasSize(width: 600, height: 200))
        #expect(doc.strokes.count == 2)
        #expect(doc.strokes[0].points[1] == InkPoint(x: 30.5, y: 40.25, t: 16, pressure: 0.5))
        #expect(doc.strokes[0].points[2].pressure == nil)
        #expect(doc.strokes[1].points[1].pressure == 0)
        #expect(doc.pointCount == 10)
    }

    @Test("numbers: exponents, negatives, long digit strings are read exactly")
    func numbers() throws {
        let text = #"{"canvas":{"width":6e2,"height":2.0E+2},"strokes":[[[1.5e1,-0.5,0],[0.1,0.2,1e-3],[12.345678901234567890123,190.00000000000001,2],[100,100,3],[200,150,4],[300,190,5],[400,10,6],[500,50,7],[550,60,8],[560,70,9]]]}"#
        let doc = try InkParser().parse(text)
        let p = doc.strokes[0].points
        #expect(doc.canvas.width == 600 && doc.canvas.height == 200)
        #expect(p[0].x == 15 && p[0].y == -0.5)
        #expect(p[1].x == 0.1 && p[1].y == 0.2 && p[1].t == 0.001)
        #expect(p[2].x == Double("12.345678901234567890123")!)
        #expect(p[2].y == Double("190.00000000000001")!)
    }

    @Test("accepts an ArraySlice inside a larger body; offsets are relative to the slice")
    func slice() throws {
        let inner = inkJSON()
        let body = Array((#"{"ref":"abc","ink":"# + inner + "}").utf8)
        let start = body.count - 1 - inner.utf8.count
        let doc = try InkParser().parse(body[start..<(body.count - 1)], format: .ink)
        #expect(doc.pointCount == 12)
        let broken = Array(("xx" + #"{"canvas":{"width":600,"height":200},"strokes":[[[1,2,3],[4,5]]]}"#).utf8)
        let e = inkError { try InkParser().parse(broken[2...], format: .ink) }
        #expect(e?.code == .invalidPoint)
        #expect(e?.offset == 57)   // the '[' of "[4,5]" within the slice
        #expect(e?.stroke == 0 && e?.point == 1)
    }

    @Test("canonical serialisation: deterministic, compact, idempotent, lossless to 0.001")
    func serializer() throws {
        let doc = syntheticDocument(pressure: true)
        let a = InkSerializer.serialize(doc)
        #expect(a == InkSerializer.serialize(doc))
        let text = String(decoding: a, as: UTF8.self)
        #expect(text.hasPrefix(#"{"format":"countersign.ink/v1","canvas":{"width":600,"height":200},"strokes":[[["#))
        let numbers = text.split(separator: "[", maxSplits: 1)[1]
        #expect(!text.contains(" ") && !numbers.contains("e") && !numbers.contains("E"))
        let back = try InkParser().parse(a)
        #expect(InkSerializer.serialize(back) == a)
        for (s, t) in zip(doc.strokes, back.strokes) {
            for (p, q) in zip(s.points, t.points) {
                #expect(abs(p.x - q.x) <= 0.0005 && abs(p.y - q.y) <= 0.0005 && abs(p.t - q.t) <= 0.0005)
                #expect(abs(p.pressure! - q.pressure!) <= 0.00005)
            }
        }
        // Specific formatting rules: rounding half away from zero, no trailing zeros, -0 -> 0.
        let tiny = InkDocument(canvas: CanvasSize(width: 600.5, height: 200),
                               strokes: [Stroke(points: [InkPoint(x: 0.0005, y: -0.0004, t: 12.3400, pressure: 0.12345),
                                                         InkPoint(x: 1e-9, y: 100, t: 1_000_000, pressure: nil)])])
        #expect(InkSerializer.string(tiny) ==
                #"{"format":"countersign.ink/v1","canvas":{"width":600.5,"height":200},"strokes":[[[0.001,0,12.34,0.1235],[0,100,1000000]]]}"#)
    }
}

@Suite("signature_pad, InkML and SVC2004")
struct OtherFormatTests {
    private static let padJSON = #"""
    [{"penColor":"black","dotSize":0,"minWidth":0.5,"maxWidth":2.5,"velocityFilterWeight":0.7,"compositeOperation":"source-over",
      "points":[{"time":1700000000000,"x":10,"y":20,"pressure":0.5},{"time":1700000000016,"x":40,"y":60,"pressure":0.6},
                {"time":1700000000032,"x":80,"y":90,"pressure":0.5},{"time":1700000000048,"x":120,"y":95}]},
     {"penColor":"black","points":[{"time":1700000000500,"x":150,"y":30},{"time":1700000000516,"x":190,"y":70},
                {"time":1700000000532,"x":230,"y":110},{"time":1700000000548,"x":280,"y":140}]},
     [{"x":300,"y":40,"time":1700000000900,"color":"black"},{"x":320,"y":80,"time":1700000000916,"color":"black"},
      {"x":340,"y":90,"time":1700000000932,"color":"black"}]]
    """#

    @Test("signature_pad toData(): groups and legacy arrays, relative time, caller canvas")
    func signaturePad() throws {
        let canvas = CanvasSize(width: 400, height: 160)
        let doc = try InkParser().parse(Self.padJSON, format: .signaturePad(canvas: canvas))
        #expect(doc.canvas == canvas)
        #expect(doc.strokes.map(\.points.count) == [4, 4, 3])
        #expect(doc.strokes[0].points[0] == InkPoint(x: 10, y: 20, t: 0, pressure: 0.5))
        #expect(doc.strokes[0].points[3].pressure == nil)
        #expect(doc.strokes[1].points[0].t == 500)
        #expect(doc.strokes[2].points[2].t == 932)
        // Auto-detected without a canvas: inferred from the ink (340 + 10 margin, 140 + 20).
        let auto = try InkParser().parse(Self.padJSON)
        #expect(auto.canvas == CanvasSize(width: 350, height: 160))
        // A configured default canvas is used by auto-detection.
        let configured = try InkParser(signaturePadCanvas: canvas).parse(Self.padJSON)
        #expect(configured.canvas == canvas)
    }

    @Test("InkML: namespace prefix, T (seconds) and F channels, difference encoding, CDATA, comments")
    func inkml() throws {
        let xml = #"""
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment -->
        <inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML">
          <inkml:definitions>
            <inkml:traceFormat xml:id="tf">
              <inkml:channel name="X" type="decimal"/>
              <inkml:channel name="Y" type="decimal"/>
              <inkml:channel name="T" type="decimal" units="s"/>
              <inkml:channel name="F" type="integer" max="1000"/>
            </inkml:traceFormat>
          </inkml:definitions>
          <inkml:traceGroup>
            <inkml:trace>100 100 0.000 500, 200 150 0.010 1000, 300 120 0.020 250, 400 180 0.030 0</inkml:trace>
            <inkml:trace type="penUp">1 1 1 1, 2 2 2 2</inkml:trace>
            <inkml:trace><![CDATA[500 100 0.5 100, '10 '10 '0.01 '0, '10 '10 '0.01 '0]]></inkml:trace>
            <inkml:trace>600 300 1.0 100, "10 "5 '0.01 0, "0 "0 '0.01 0, "0 "0 '0.01 0</inkml:trace>
          </inkml:traceGroup>
        </inkml:ink>
        """#
        let doc = try InkParser().parse(xml)
        #expect(doc.strokes.map(\.points.count) == [4, 3, 4])
        // Source extent 100...630 x 100...315 fits at scale 1 (530 <= 560): pure translation.
        #expect(doc.canvas == CanvasSize(width: 600, height: 255))
        let p0 = doc.strokes[0].points[0]
        let dx = p0.x - 100, dy = p0.y - 100
        #expect(doc.strokes[1].points[2].x == 520 + dx && doc.strokes[1].points[2].y == 120 + dy)
        // Second differences: velocity 10,5 then constant: x 600,610,620,630; y 300,305,310,315.
        #expect(doc.strokes[2].points.map { $0.x - dx } == [600, 610, 620, 630])
        #expect(doc.strokes[2].points.map { $0.y - dy } == [300, 305, 310, 315])
        #expect(doc.strokes[0].points.map(\.t) == [0, 10, 20, 30])
        #expect(doc.strokes[2].points[3].t == 1030)
        #expect(doc.strokes[0].points.map(\.pressure) == [0.5, 1, 0.25, 0])
    }

    @Test("InkML without namespace or traceFormat defaults to X Y and synthesises time")
    func inkmlMinimal() throws {
        let xml = "<ink><trace>0 0, 100 50, 200 0, 300 50, 400 0</trace>\r\n<trace>10 10,20 20,30 30,40 40,50 50</trace></ink>"
        let doc = try InkParser().parse(xml, format: .inkml)
        #expect(doc.pointCount == 10)
        #expect(doc.strokes[1].points.map(\.t) == [50, 60, 70, 80, 90])
        #expect(doc.strokes[0].points[0].pressure == nil)
    }

    @Test("SVC2004: header count, pen lifts at button 0, y flipped, relative time, pressure / 1023, CRLF")
    func svc() throws {
        let rows = [
            "1000 5000 31000000 0 100 500 1023", "1500 5200 31000010 1 100 500 512",
            "2000 5400 31000020 1 100 500 0", "2500 5600 31000030 1 100 500 300",
            "3000 4000 31000200 0 100 500 400", "3500 4200 31000210 1 100 500 400",
            "4000 4400 31000201 1 100 500 400",   // -9 ms jitter is tolerated
            "4500 4600 31000230 1 100 500 400", "5000 4800 31000240 1 100 500 400",
            "6000 5000 31000250 1 100 500 400",
        ]
        let text = "\(rows.count)\r\n" + rows.joined(separator: "\r\n") + "\r\n"
        let doc = try InkParser().parse(text)
        #expect(doc.strokes.map(\.points.count) == [4, 6])
        #expect(doc.canvas.width == 600)
        let a = doc.strokes[0].points[0], b = doc.strokes[0].points[3]
        // y up in the file: the point with the larger tablet y is higher (smaller canvas y).
        #expect(b.y < a.y)
        // Uniform scale: 5000 tablet units wide -> 560 canvas units.
        #expect(abs((b.x - a.x) - 1500 * 560.0 / 5000) < 0.002)
        #expect(abs((a.y - b.y) - 600 * 560.0 / 5000) < 0.002)
        #expect(a.t == 0 && doc.strokes[1].points[0].t == 200)
        #expect(a.pressure == 1 && doc.strokes[0].points[2].pressure == 0)
        // Task 1 style (4 columns, LF): no pressure.
        let t1 = "10\n" + rows.map { $0.split(separator: " ").prefix(4).joined(separator: " ") }.joined(separator: "\n")
        let d1 = try InkParser().parse(t1, format: .svc2004)
        #expect(d1.strokes.allSatisfy { $0.points.allSatisfy { $0.pressure == nil } })
        #expect(d1.strokes.map(\.points.count) == [4, 6])
    }

    @Test("format detection")
    func detection() {
        #expect(InkFormatKind.detect(Array("  {\"a\":1}".utf8)) == .ink)
        #expect(InkFormatKind.detect(Array("\u{FEFF}[]".utf8)) == .signaturePad)
        #expect(InkFormatKind.detect(Array("\r\n<ink/>".utf8)) == .inkml)
        #expect(InkFormatKind.detect(Array("148\n".utf8)) == .svc2004)
        #expect(InkFormatKind.detect(Array("hello".utf8)) == nil)
        #expect(InkFormatKind(rawValue: "signature-pad") == .signaturePad)
        #expect(InkFormatKind(rawValue: "svc") == .svc2004)
    }
}

@Suite("Locating the ink member in a request body")
struct MemberLocatorTests {
    @Test("finds the value range, which parses as ink; reports absent, duplicate and malformed bodies")
    func locate() throws {
        let ink = InkSerializer.string(syntheticDocument(strokes: 2, perStroke: 10))
        let body = Array(#"{"ref":"A-17","meta":{"ink":"not this one"},"ink":  "# .utf8) + Array(ink.utf8) + Array(#" ,"n":[1,2]}"#.utf8)
        let range = try #require(try JSONMemberLocator.range(ofMember: "ink", in: body))
        #expect(Array(body[range]) == Array(ink.utf8))
        let doc = try InkParser().parse(body[range], format: .ink)
        #expect(doc.pointCount == 20)
        // Works on a slice too: indices are those of the slice's base array.
        let padded = [UInt8](repeating: 0x20, count: 5) + body
        let r2 = try #require(try JSONMemberLocator.range(ofMember: "ink", in: padded[5...]))
        #expect(r2 == (range.lowerBound + 5)..<(range.upperBound + 5))
        #expect(try JSONMemberLocator.range(ofMember: "signature", in: body) == nil)
        #expect(inkError { try JSONMemberLocator.range(ofMember: "ink", in: Array(#"{"ink":1,"ink":2}"#.utf8)) }?.code == .duplicateField)
        #expect(inkError { try JSONMemberLocator.range(ofMember: "ink", in: Array(#"{"ink":[1,2}"#.utf8)) }?.code == .invalidJSON)
        #expect(inkError { try JSONMemberLocator.range(ofMember: "ink", in: Array("[]".utf8)) }?.code == .invalidJSON)
    }

    @Test("finds several members in one pass, each range in the order asked, and refuses a duplicate of any member")
    func locateSeveral() throws {
        let body = Array(#"{"pad":[[1,2]],"ref":"A","ink":{"strokes":[]},"n":3}"#.utf8)
        let ranges = try JSONMemberLocator.ranges(ofMembers: ["ink", "missing", "pad"], in: body)
        #expect(ranges.count == 3)
        #expect(ranges[0].map { String(decoding: body[$0], as: UTF8.self) } == #"{"strokes":[]}"#)
        #expect(ranges[1] == nil)
        #expect(ranges[2].map { String(decoding: body[$0], as: UTF8.self) } == "[[1,2]]")
        let twice = Array(#"{"ink":1,"pad":2,"pad":3}"#.utf8)
        #expect(inkError { try JSONMemberLocator.ranges(ofMembers: ["ink", "pad"], in: twice) }?.code == .duplicateField)
        // Any member twice is refused, not only the ones asked for: the body would mean two things.
        #expect(inkError { try JSONMemberLocator.ranges(ofMembers: ["ink"], in: twice) }?.pointer == "/pad")
    }

    @Test("a member name twice at any depth is refused with its JSON pointer; the same name in two objects is fine")
    func duplicatesAtAnyDepth() throws {
        func pointer(_ json: String) -> String? {
            inkError { try JSONMemberLocator.requireUniqueMembers(in: Array(json.utf8)) }?.pointer
        }
        #expect(pointer(#"{"a":{"b":[{"c":1},{"c":1,"c":2}]}}"#) == "/a/b/1/c")
        #expect(pointer(#"{"x/y":{"~":1,"~":2}}"#) == "/x~1y/~0", "escaped names are compared decoded; the pointer escapes ~ and /")
        #expect(pointer(#"{"a":{"c":1},"b":{"c":1},"l":[{"c":1},{"c":2}]}"#) == nil)
        #expect(inkError { try JSONMemberLocator.requireUniqueMembers(in: Array(#"{"a":1,"a":1}"#.utf8)) }?.code == .duplicateField)
    }
}
