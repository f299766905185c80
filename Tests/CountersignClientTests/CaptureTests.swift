import CZlib
import CountersignClient
import Foundation
import InkTestSupport
import SignatureKit
import Testing

@Suite("Capture: InkRecorder, the body, gzip")
struct CaptureTests {
    @Test("the live outline, built point by point, is the outline the server renders from the stored ink")
    func previewIsTheProof() throws {
        let source = syntheticDocument(strokes: 4, perStroke: 50, pressure: true)
        var recorder = InkRecorder(canvas: source.canvas)
        var previews = 0
        for stroke in source.strokes {
            recorder.beginStroke()
            for p in stroke.points {
                recorder.add(x: p.x, y: p.y, t: p.t, pressure: p.pressure)
                if !recorder.outline.isEmpty { previews += 1 }
            }
            recorder.endStroke()
        }
        #expect(previews == source.pointCount)
        #expect(recorder.outline == SignatureReconstructor.outline(for: recorder.document))
        let ink = try recorder.finish()
        #expect(ink.json == InkSerializer.serialize(try InkParser().parse(ink.json, format: .ink)))
        #expect(ink.document.strokes.count == 4)
    }

    @Test("a single dot is blank_signature; nothing drawn is too")
    func dot() {
        var recorder = InkRecorder(canvas: CanvasSize(width: 600, height: 200))
        #expect(throws: InkError.self) { try recorder.validate() }
        recorder.add(x: 10, y: 10, t: 0)
        do {
            _ = try recorder.finish()
            Issue.record("a dot was accepted")
        } catch {
            #expect(error.code == .blankSignature)
        }
    }

    /// (x step, t start, t step, the code): 20 points along y = 100 on a 600×200 canvas.
    static let refusals: [(Double, Double, Double, InkError.Code)] = [
        (0.1, 0, 8, .blankSignature),      // a smudge 2 units wide
        (30, 0, 8, .outOfCanvas),          // runs past x = 660
        (10, 1000, -80, .timeBackwards),   // time runs back 80 ms a step
    ]

    @Test("blank and implausible ink is refused before upload with the server's codes", arguments: refusals)
    func refusedEarly(refusal: (Double, Double, Double, InkError.Code)) {
        let (step, start, tick, code) = refusal
        var recorder = InkRecorder(canvas: CanvasSize(width: 600, height: 200))
        recorder.beginStroke()
        for i in 0..<20 { recorder.add(x: 100 + Double(i) * step, y: 100, t: start + Double(i) * tick) }
        #expect(throws: InkError.self) { try recorder.validate() }
        do {
            _ = try recorder.finish()
            Issue.record("accepted")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test("the body is the envelope plus the canonical ink member, byte for byte")
    func body() throws {
        let submission = try Samples.submission()
        let body = try submission.jsonBody()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(Set(object.keys) == ["signer", "captured_at", "location", "device", "ink"])
        #expect((object["signer"] as? [String: Any])?["name"] as? String == "Ada Lovelace")
        #expect((object["location"] as? [String: Any])?["accuracy_m"] as? Double == 8)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.hasSuffix(#","ink":"# + String(decoding: submission.ink.json, as: UTF8.self) + "}"))
    }

    @Test("imported formats become the same canonical ink; an unparseable file is an InkError")
    func importing() throws {
        let ink = try Samples.ink()
        #expect(try CapturedInk(importing: ink.json) == ink)
        var pad = "["
        pad += ink.document.strokes.map { stroke in
            "[" + stroke.points.map { #"{"x":\#($0.x),"y":\#($0.y),"time":\#(1_700_000_000_000 + $0.t)}"# }.joined(separator: ",") + "]"
        }.joined(separator: ",") + "]"
        let fromPad = try CapturedInk(importing: Array(pad.utf8), format: .signaturePad(canvas: CanvasSize(width: 600, height: 200)))
        #expect(fromPad.document.pointCount == ink.document.pointCount)
        #expect(throws: InkError.self) { try CapturedInk(importing: Array("<!DOCTYPE x><ink/>".utf8)) }
    }

    @Test("gzip: zlib inflates it back, and the same input gives the same bytes (retries must match the key's fingerprint)")
    func gzip() throws {
        let json = try Samples.submission().jsonBody()
        let compressed = try Gzip.compress(json)
        #expect(compressed.count < json.count / 2)
        #expect(Array(compressed.prefix(2)) == [0x1F, 0x8B])
        #expect(try Gzip.compress(json) == compressed)
        #expect(try inflate(compressed) == json)
        #expect(try inflate(try Gzip.compress([])) == [])
    }

    func inflate(_ bytes: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        try #require(inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { inflateEnd(&stream) }
        var input = bytes
        var output = [UInt8](repeating: 0, count: 1 << 20)
        let result = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        try #require(result == Z_STREAM_END)
        return Array(output.prefix(Int(stream.total_out)))
    }
}
