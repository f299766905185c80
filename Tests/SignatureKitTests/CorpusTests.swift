import Foundation
import Testing
import SignatureKit
import SignatureRender  // the pipeline test ends in SVG

@Suite("Real corpus (../shared/corpus)", .enabled(if: Corpus.isAvailable, Corpus.absentMessage))
struct CorpusTests {
    @Test("every SVC2004 file parses, maps into a 600-wide canvas with y flipped, and keeps its points")
    func svc2004() throws {
        var files = 0, withPressure = 0
        for folder in ["svc2004-task1", "svc2004-task2"] {
            for url in Corpus.files(in: folder) {
                let bytes = try Corpus.bytes(url)
                let doc = try InkParser().parse(bytes)
                files += 1
                // Independent reading of the file: header count, button-0 rows, first/last rows.
                let rows = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.split(separator: " ").compactMap { Double($0) } }
                #expect(doc.pointCount == Int(rows[0][0]), "\(url.lastPathComponent)")
                let lifts = rows.dropFirst().dropFirst().filter { $0[3] == 0 }.count
                #expect(doc.strokes.count == lifts + 1, "\(url.lastPathComponent)")
                #expect(doc.canvas.width == 600)
                let b = try #require(doc.inkBounds)
                #expect(b.minX >= 0 && b.maxX <= 600 && b.minY >= 0 && b.maxY <= doc.canvas.height)
                // y up in the file: the sample with the largest tablet y has the smallest canvas y.
                let samples = Array(rows.dropFirst())
                let top = samples.indices.max { samples[$0][1] < samples[$1][1] }!
                let flat = doc.strokes.flatMap(\.points)
                #expect(abs(flat[top].y - b.minY) < 0.01, "\(url.lastPathComponent)")
                #expect(flat[0].t == 0)
                if flat[0].pressure != nil { withPressure += 1 }
            }
        }
        #expect(files > 0)
        #expect(withPressure == Corpus.files(in: "svc2004-task2").count)
    }

    @Test("every InkML file parses: one stroke per non-empty trace, y down, no time channel")
    func inkml() throws {
        let files = Corpus.files(in: "imadocsen-inkml")
        #expect(!files.isEmpty)
        for url in files {
            let bytes = try Corpus.bytes(url)
            let doc = try InkParser().parse(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            let traces = text.components(separatedBy: "<trace ").count - 1
            #expect(doc.strokes.count == traces, "\(url.lastPathComponent)")
            #expect(doc.canvas.width == 600)
            #expect(doc.strokes[0].points.allSatisfy { $0.pressure == nil })
        }
    }

    @Test("corpus documents: incremental == batch, serialisation round-trips, SVG is deterministic")
    func pipeline() throws {
        var urls = Corpus.files(in: "svc2004-task2").prefix(40) + Corpus.files(in: "svc2004-task1").prefix(20)
        urls += Corpus.files(in: "imadocsen-inkml")
        for url in urls {
            let doc = try InkParser().parse(try Corpus.bytes(url))
            var r = SignatureReconstructor()
            var elements: [PathElement] = []
            for s in doc.strokes {
                for p in s.points { if let f = r.add(p).finalized { elements += f } }
                elements += r.endStroke() ?? []
            }
            let outline = doc.outline()
            #expect(outline.elements == elements, "\(url.lastPathComponent)")
            let json = InkSerializer.serialize(doc)
            #expect(try InkParser().parse(json) == doc, "\(url.lastPathComponent)")
            let a = try SVGWriter.render(doc), b = try SVGWriter.render(try InkParser().parse(json))
            #expect(a == b)
            #expect(a.count > 1000)
        }
    }
}
