import Foundation
import PNG
import PNGTestSupport
import Raster
import SignatureKit
import SignatureRender
import Testing

/// The shared corpus of real recordings: `<repo>/../shared/corpus`, or `$COUNTERSIGN_CORPUS`.
enum Corpus {
    static let directory: URL = {
        if let env = ProcessInfo.processInfo.environment["COUNTERSIGN_CORPUS"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        let repo = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()

    static var available: Bool { !files.isEmpty }

    static var skipMessage: Comment {
        "corpus not found at \(directory.path) (set COUNTERSIGN_CORPUS): skipped"
    }

    /// Every ink file (not README) below the corpus, sorted, as paths relative to it.
    static let files: [String] = {
        guard let e = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var out: [String] = []
        while let rel = e.nextObject() as? String {
            let lower = rel.lowercased()
            if lower.hasSuffix(".txt") || lower.hasSuffix(".inkml") || lower.hasSuffix(".json") || lower.hasSuffix(".ink") {
                out.append(rel)
            }
        }
        return out.sorted()
    }()

    static func document(_ rel: String) throws -> InkDocument {
        let data = try Data(contentsOf: directory.appendingPathComponent(rel))
        return try InkParser().parse([UInt8](data))
    }
}

enum Tools {
    static let rsvgConvert: String? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/rsvg-convert"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }()
}

/// Peak signal-to-noise ratio (dB) between two 8-bit channels.
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count)
    var se = 0.0
    for i in a.indices {
        let d = Double(a[i]) - Double(b[i])
        se += d * d
    }
    if se == 0 { return .infinity }
    let mse = se / Double(a.count)
    return 10 * log10(255 * 255 / mse)
}

@Suite struct SignatureRenderTests {
    static let simpleInk = InkDocument(canvas: CanvasSize(width: 300, height: 100), strokes: [
        Stroke(points: (0..<40).map { i in
            InkPoint(x: 20 + Double(i) * 6, y: 50 + 30 * sin(Double(i) / 4), t: Double(i) * 10)
        }),
        Stroke(points: [InkPoint(x: 150, y: 20, t: 600)]),
    ])

    @Test func defaultSizeIsCanvasTimesTwoAndInkIsThere() throws {
        let img = try SignatureRenderer.renderPNG(Self.simpleInk)
        #expect(img.width == 600 && img.height == 200)
        let decoded = try PNGDecoder.decodeRGBA(img.png)
        #expect(decoded.width == 600 && decoded.height == 200)
        let alpha = decoded.alpha
        #expect(alpha.contains(255))
        #expect(alpha[0] == 0, "background is transparent")
        // The dot at canvas (150, 20), radius 3 -> pixel (300, 40) radius 6, fully inked.
        #expect(alpha[40 * 600 + 300] == 255)
        // Ink is black.
        let i = alpha.firstIndex(of: 255)!
        #expect(decoded.rgba[4 * i] == 0 && decoded.rgba[4 * i + 1] == 0 && decoded.rgba[4 * i + 2] == 0)
    }

    @Test func coverageMatchesTheRasteriserDirectly() throws {
        let g = try SignatureRenderer.geometry(Self.simpleInk)
        let alpha = SignatureRenderer.rasterize(g)
        let img = try SignatureRenderer.renderPNG(g)
        #expect(try PNGDecoder.decodeRGBA(img.png).alpha == alpha)
    }

    /// The banded pipeline (rasteriser rows straight into libpng) writes the very file that
    /// encoding the whole coverage mask gives, for every colour/background combination.
    @Test func bandedRenderIsTheSameFileAsEncodingTheWholeMask() throws {
        var docs = [Self.simpleInk]
        if Corpus.available {
            let files = Corpus.files
            docs += try stride(from: 0, to: files.count, by: max(1, files.count / 12)).map { try Corpus.document(files[$0]) }
        }
        var variants: [RenderOptions] = [RenderOptions()]
        var white = RenderOptions()
        white.background = .white
        white.color = RGBColor(red: 0x12, green: 0x34, blue: 0x56)
        var grey = RenderOptions()
        grey.background = .white
        grey.color = RGBColor(red: 40, green: 40, blue: 40)
        var trimmed = RenderOptions()
        trimmed.layout.trim = true
        variants += [white, grey, trimmed]
        for doc in docs {
            for o in variants {
                let g = try SignatureRenderer.geometry(doc, options: o)
                let mask = SignatureRenderer.rasterize(g, options: o)
                let whole = try PNGEncoder.encode(
                    alpha: mask, width: g.layout.pixelWidth, height: g.layout.pixelHeight,
                    color: PNGColor(red: o.color.red, green: o.color.green, blue: o.color.blue),
                    background: o.background == .white ? .white : .transparent, options: o.png)
                #expect(try SignatureRenderer.renderPNG(g, options: o).png == whole)
                var timings = RenderTimings()
                #expect(try SignatureRenderer.renderPNG(doc, options: o, timings: &timings).png == whole)
                #expect(timings.render > .zero && timings.encode > .zero)
            }
        }
    }

    @Test func optionsColourWhiteBackgroundSizeAndTrim() throws {
        var o = RenderOptions()
        o.color = RGBColor(red: 0x12, green: 0x34, blue: 0x56)
        o.background = .white
        o.layout.width = 450
        let img = try SignatureRenderer.renderPNG(Self.simpleInk, options: o)
        #expect(img.width == 450 && img.height == 150)
        let d = try PNGDecoder.decodeRGBA(img.png)
        #expect(d.alpha.allSatisfy { $0 == 255 })
        #expect(Array(d.rgba[0..<3]) == [255, 255, 255])
        var found = false
        for i in 0..<(d.width * d.height) where d.rgba[4 * i] == 0x12 && d.rgba[4 * i + 1] == 0x34 && d.rgba[4 * i + 2] == 0x56 {
            found = true
            break
        }
        #expect(found, "full-coverage pixels carry the ink colour")

        var t = RenderOptions()
        t.layout.trim = true
        let trimmed = try SignatureRenderer.renderPNG(Self.simpleInk, options: t)
        #expect(trimmed.width < 600 && trimmed.height < 200)
    }

    @Test func maxOutputSizeIsEnforced() {
        var o = RenderOptions()
        o.layout.scale = 20  // 6000 x 2000 > 4096 per side
        #expect(throws: RenderError.self) { try SignatureRenderer.renderPNG(Self.simpleInk, options: o) }
        var p = RenderOptions()
        p.layout.scale = 10  // 3000 x 1000 = 3 MP > 2.5 MP default
        do {
            _ = try SignatureRenderer.renderPNG(Self.simpleInk, options: p)
            Issue.record("3 MP accepted")
        } catch {
            guard case .options(let e) = error else { Issue.record("wrong error \(error)"); return }
            #expect(e.code == .outputTooLarge)
        }
        p.maxPixels = 4_000_000
        #expect((try? SignatureRenderer.renderPNG(Self.simpleInk, options: p)) != nil)
    }

    @Test func svgHasTheSameSizeAndColour() throws {
        var o = RenderOptions()
        o.color = RGBColor(red: 0, green: 0x80, blue: 0xFF)
        let svg = try SignatureRenderer.renderSVG(Self.simpleInk, options: o)
        #expect(svg.contains(#"viewBox="0 0 600 200""#))
        #expect(svg.contains("#0080FF"))
        #expect(try SignatureRenderer.renderSVG(Self.simpleInk, options: o) == svg)
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyCorpusFileRendersNonBlankAndDeterministically() async throws {
        let files = Corpus.files
        #expect(files.count > 600)
        // Split over two tasks (two cores); each file rendered twice.
        let failures = await withTaskGroup(of: [String].self) { group in
            for part in 0..<2 {
                group.addTask {
                    var bad: [String] = []
                    for (i, rel) in files.enumerated() where i % 2 == part {
                        do {
                            let doc = try Corpus.document(rel)
                            let a = try SignatureRenderer.renderPNG(doc)
                            let b = try SignatureRenderer.renderPNG(doc)
                            if a != b { bad.append("\(rel): two renders differ") }
                            let alpha = try PNGDecoder.decodeRGBA(a.png).alpha
                            let inked = alpha.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
                            if inked < 100 { bad.append("\(rel): only \(inked) inked pixels") }
                        } catch {
                            bad.append("\(rel): \(error)")
                        }
                    }
                    return bad
                }
            }
            var all: [String] = []
            for await b in group { all += b }
            return all
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(10))")
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage),
          .enabled(if: Tools.rsvgConvert != nil, "rsvg-convert not installed (Debian librsvg2-bin): skipped"))
    func svgRasterisedByRsvgAgreesWithOurPNG() throws {
        // A spread of real signatures from every corpus folder.
        let files = Corpus.files
        var picked: [String] = []
        for folder in Set(files.map { $0.split(separator: "/").first.map(String.init) ?? "" }).sorted() {
            let inFolder = files.filter { $0.hasPrefix(folder + "/") }
            let step = max(1, inFolder.count / 8)
            picked += stride(from: 0, to: inFolder.count, by: step).map { inFolder[$0] }
        }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-rsvg-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        var worst = Double.infinity
        for rel in picked {
            let doc = try Corpus.document(rel)
            let g = try SignatureRenderer.geometry(doc)
            let ours = SignatureRenderer.rasterize(g)
            let svgURL = tmp.appendingPathComponent("s.svg"), pngURL = tmp.appendingPathComponent("s.png")
            try Data(try SignatureRenderer.renderSVGBytes(doc)).write(to: svgURL)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Tools.rsvgConvert!)
            p.arguments = ["-o", pngURL.path, svgURL.path]
            try p.run()
            p.waitUntilExit()
            try #require(p.terminationStatus == 0, "rsvg-convert failed on \(rel)")
            let theirs = try PNGDecoder.decodeRGBA([UInt8](Data(contentsOf: pngURL)))
            try #require(theirs.width == g.layout.pixelWidth && theirs.height == g.layout.pixelHeight)
            let db = psnr(ours, theirs.alpha)
            worst = min(worst, db)
            #expect(db >= 35, "\(rel): alpha PSNR \(db) dB")
        }
        #expect(picked.count >= 20)
        print("rsvg agreement over \(picked.count) corpus files: worst alpha PSNR \(worst) dB")
    }
}
