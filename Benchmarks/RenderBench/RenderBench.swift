import ArgumentParser
import Foundation
import SignatureKit
import SignatureRender

/// `render-bench` (formerly `countersign bench`): times the render pipeline on every SVC2004
/// signature of the corpus at the default size (parse, reconstruct + layout, rasterise,
/// PNG-encode, and all together), measures a render's peak memory, and can dump the pixel-space
/// outlines for the cairo peer (`Benchmarks/cairo_fill.c`, driven by `Benchmarks/run.sh`).
/// Its own executable so the shipped binary carries no benchmark. Build with `-c release`:
/// `swift build -c release --product render-bench`.
@main
struct RenderBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-bench",
        abstract: "Benchmark parse/reconstruct/rasterise/PNG on the SVC2004 corpus (not a test)."
    )

    @Option(help: "Corpus directory holding svc2004-task1/ and svc2004-task2/.")
    var corpus: String = "../shared/corpus"

    @Option(help: "Timed repetitions per signature.")
    var iterations: Int = 20

    @Option(help: "Use only every Nth signature (1 = all).")
    var every: Int = 1

    @Option(help: "banded (rows straight from the rasteriser into libpng, as the server renders), whole (the full coverage mask first, then PNGEncoder.encode) or both (alternating per iteration, with the paired ratio).")
    var pipeline: String = "banded"

    @Option(help: "PNG compressor: run-length (the default, as the server renders) or zlib (libpng's, for comparison).")
    var compressor: String = "run-length"

    @Option(help: "Write every signature's outline in output pixels to this file (for the cairo peer).")
    var dumpOutlines: String?

    @Option(help: "Pixels per canvas unit (the server stores proofs at the default, 2).")
    var scale: Double = 2

    func validate() throws {
        guard ["banded", "whole", "both"].contains(pipeline) else {
            throw ValidationError("--pipeline must be banded, whole or both")
        }
        guard PNGCompressor(rawValue: compressor) != nil else {
            throw ValidationError("--compressor must be run-length or zlib")
        }
        guard scale > 0 && scale <= 8 else { throw ValidationError("--scale must be more than 0 and at most 8") }
        if pipeline == "both" && iterations < 2 {
            throw ValidationError("--pipeline both alternates the two paths per iteration: give --iterations 2 or more")
        }
    }

    func run() throws {
        let loadAtStart = Self.loadAverage()
        let files = svcFiles().enumerated().filter { $0.offset % max(1, every) == 0 }.map(\.element)
        guard !files.isEmpty else {
            FileHandle.standardError.write(Data("render-bench: no SVC2004 files under \(corpus)\n".utf8))
            throw ExitCode(2)
        }
        let inputs = try files.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let parser = InkParser()
        var options = RenderOptions()
        options.layout.scale = scale
        options.png.compressor = PNGCompressor(rawValue: compressor)!  // checked in validate()

        var parse: [Double] = [], reconstruct: [Double] = [], raster: [Double] = []
        var encode: [Double] = [], total: [Double] = [], totalCPU: [Double] = [], pngBytes: [Int] = []
        var wholeTotals: [Double] = [], bandedTotals: [Double] = []
        var bestTotal: [Double] = []  // per signature: its fastest iteration (least disturbed)
        var points: [Int] = [], pixels: [Int] = []
        var dump = ""
        let clock = ContinuousClock()

        // Sizes first (no rendering yet), so the memory probe below runs in a fresh heap.
        for bytes in inputs {
            let g = try SignatureRenderer.geometry(try parser.parse(bytes, format: .svc2004), options: options)
            pixels.append(g.layout.pixelWidth * g.layout.pixelHeight)
        }
        var memoryLine = "render peak memory: not measured (needs Linux /proc/self/clear_refs)"
        // Peak memory of one render (the largest image), as the rise of the process' RSS
        // high-water mark (VmHWM, reset through /proc/self/clear_refs) over the RSS before it.
        if let biggest = pixels.indices.max(by: { pixels[$0] < pixels[$1] }),
           let before = Self.resetHighWater() {
            let doc = try parser.parse(inputs[biggest], format: .svc2004)
            _ = try SignatureRenderer.renderPNG(doc, options: options)
            if let hwm = Self.status("VmHWM") {
                memoryLine = "render peak memory (largest image, \(pixels[biggest]) px): +\((hwm - before) / 1024) KiB over \(before / 1024) KiB RSS"
            }
        }

        pixels.removeAll()

        for bytes in inputs {
            // Untimed warm-up, and the dump.
            let doc = try parser.parse(bytes, format: .svc2004)
            let g = try SignatureRenderer.geometry(doc, options: options)
            points.append(doc.pointCount)
            pixels.append(g.layout.pixelWidth * g.layout.pixelHeight)
            if dumpOutlines != nil { dump += Self.dump(g) }
            _ = try SignatureRenderer.renderPNG(g, options: options)

            var best = Double.infinity
            var alternate = false
            for _ in 0..<iterations {
                // `banded` is the production path (`SignatureRenderer.renderPNG`): rasterising and
                // PNG encoding run interleaved band by band, and the renderer reports each half's
                // share. `whole` materialises the coverage mask first; `both` alternates the two.
                var split = RenderTimings()
                let c0 = Self.threadCPUTime()
                let t0 = clock.now
                let d = try parser.parse(bytes, format: .svc2004)
                let t1 = clock.now
                let geo = try SignatureRenderer.geometry(d, options: options)
                let t2 = clock.now
                let png: [UInt8]
                let whole = pipeline == "whole" || (pipeline == "both" && alternate)
                alternate.toggle()
                if whole {
                    let r0 = clock.now
                    let alpha = SignatureRenderer.rasterize(geo, options: options)
                    let r1 = clock.now
                    png = try SignatureRenderer.encodePNG(alpha, width: geo.layout.pixelWidth, height: geo.layout.pixelHeight,
                                                          options: options)
                    split = RenderTimings(render: r1 - r0, encode: clock.now - r1)
                } else {
                    png = try SignatureRenderer.renderPNG(geo, options: options, timings: &split).png
                }
                let t3 = clock.now
                let c1 = Self.threadCPUTime()
                parse.append(Self.ms(t1 - t0))
                reconstruct.append(Self.ms(t2 - t1))
                raster.append(Self.ms(split.render))
                encode.append(Self.ms(split.encode))
                total.append(Self.ms(t3 - t0))
                if pipeline == "both" {
                    if whole { wholeTotals.append(Self.ms(t3 - t0)) } else { bandedTotals.append(Self.ms(t3 - t0)) }
                }
                best = min(best, Self.ms(t3 - t0))
                totalCPU.append((c1 - c0) * 1000)
                pngBytes.append(png.count)
            }
            if best.isFinite { bestTotal.append(best) }
        }

        print("load average (1/5/15 min): \(loadAtStart) at the start, \(Self.loadAverage()) at the end")
        print("render-bench: \(inputs.count) SVC2004 signatures × \(iterations) iterations, canvas × \(scale == 2 ? "2, the default" : String(scale))")
        print("points per signature: median \(Self.median(points.map(Double.init))), max \(points.max()!)")
        print("pixels per image: median \(Int(Self.median(pixels.map(Double.init)))), max \(pixels.max()!)")
        print("PNG size: median \(Int(Self.median(pngBytes.map(Double.init)))) bytes")
        print("stage                       median ms     p99 ms")
        for (name, xs) in [("parse", parse), ("reconstruct+layout", reconstruct), ("rasterise", raster),
                           ("png-encode", encode), ("total (parse..png)", total),
                           ("total, thread CPU time", totalCPU)] {
            print(name.padding(toLength: 26, withPad: " ", startingAt: 0)
                  + String(format: "%10.3f %10.3f", Self.median(xs), Self.percentile(xs, 0.99)))
        }

        // Noise-robust companion: each signature's fastest iteration, then median/p99 over the
        // signatures. On a shared machine this approximates an undisturbed core; it is not the
        // median over all iterations above.
        print("total, best of \(iterations) per sig".padding(toLength: 26, withPad: " ", startingAt: 0)
              + String(format: "%10.3f %10.3f", Self.median(bestTotal), Self.percentile(bestTotal, 0.99)))
        if pipeline == "both" {
            let ratios = zip(bandedTotals, wholeTotals).map { $0 / $1 }
            print(String(format: "both: whole %.3f, banded %.3f ms median; banded/whole per pair: median %.3f",
                         Self.median(wholeTotals), Self.median(bandedTotals), Self.median(ratios)))
        }
        print(memoryLine)
        try printInkParse(svcInputs: inputs, parser: parser, clock: clock)

        if let path = dumpOutlines {
            try Data(dump.utf8).write(to: URL(fileURLWithPath: path))
            print("outlines written to \(path)")
        }
    }

    /// Times the native-format parser on a 2,000-point `countersign.ink/v1` document (the issue's
    /// parse target) made of the first signatures' strokes, beside Foundation's JSONDecoder
    /// decoding the same bytes into plain arrays (what the parser replaces).
    func printInkParse(svcInputs: [[UInt8]], parser: InkParser, clock: ContinuousClock) throws {
        let wanted = 2_000
        var strokes: [Stroke] = []
        var height = 1.0
        var count = 0
        var clock0 = 0.0  // each signature's times follow the previous one's
        for bytes in svcInputs where count < wanted {
            let doc = try parser.parse(bytes, format: .svc2004)
            height = max(height, doc.canvas.height)
            var last = clock0
            for stroke in doc.strokes where count < wanted {
                let points = stroke.points.prefix(wanted - count).map { point in
                    var shifted = point
                    shifted.t += clock0
                    last = max(last, shifted.t)
                    return shifted
                }
                strokes.append(Stroke(points: points))
                count += points.count
            }
            clock0 = last + 100
        }
        let ink = InkSerializer.serialize(InkDocument(canvas: CanvasSize(width: 600, height: height), strokes: strokes))
        struct PlainInk: Decodable {
            struct Canvas: Decodable { var width, height: Double }
            var canvas: Canvas
            var strokes: [[[Double]]]
        }
        var ours: [Double] = [], foundation: [Double] = []
        for _ in 0..<200 {
            let t0 = clock.now
            let parsed = try parser.parse(ink, format: .ink)
            let t1 = clock.now
            let plain = try JSONDecoder().decode(PlainInk.self, from: Data(ink))
            let t2 = clock.now
            precondition(parsed.pointCount == count && plain.strokes.count == strokes.count)
            ours.append(Self.ms(t1 - t0))
            foundation.append(Self.ms(t2 - t1))
        }
        print("ink JSON parse, \(count) points (\(ink.count) bytes), median / p99 ms of 200:")
        print("  our ink parser".padding(toLength: 26, withPad: " ", startingAt: 0)
              + String(format: "%10.3f %10.3f", Self.median(ours), Self.percentile(ours, 0.99)))
        print("  Foundation JSONDecoder".padding(toLength: 26, withPad: " ", startingAt: 0)
              + String(format: "%10.3f %10.3f", Self.median(foundation), Self.percentile(foundation, 0.99)))
    }

    func svcFiles() -> [String] {
        var out: [String] = []
        for folder in ["svc2004-task1", "svc2004-task2"] {
            let dir = corpus + "/" + folder
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            out += names.filter { $0.uppercased().hasSuffix(".TXT") }.sorted().map { dir + "/" + $0 }
        }
        return out
    }

    /// One outline as text: `S width height`, then one element per line (M/L/Q/C/Z), `E`.
    static func dump(_ g: RenderGeometry) -> String {
        var s = "S \(g.layout.pixelWidth) \(g.layout.pixelHeight)\n"
        func p(_ q: SignatureKit.Point) -> String { "\(q.x) \(q.y)" }
        for e in g.outline.elements {
            switch e {
            case .move(let a): s += "M \(p(a))\n"
            case .line(let a): s += "L \(p(a))\n"
            case .quad(let c, let a): s += "Q \(p(c)) \(p(a))\n"
            case .cubic(let c1, let c2, let a): s += "C \(p(c1)) \(p(c2)) \(p(a))\n"
            case .close: s += "Z\n"
            }
        }
        return s + "E\n"
    }

    /// CPU time of the calling thread in seconds (excludes time spent preempted by other work).
    static func threadCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// `/proc/loadavg`'s first three fields, or "unknown".
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func ms(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    static func median(_ xs: [Double]) -> Double { percentile(xs, 0.5) }

    static func percentile(_ xs: [Double], _ q: Double) -> Double {
        guard !xs.isEmpty else { return .nan }
        let s = xs.sorted()
        return s[min(s.count - 1, Int((Double(s.count - 1) * q).rounded()))]
    }

    /// A `/proc/self/status` value in bytes (the file gives kB).
    static func status(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return digits.map { $0 * 1024 }
        }
        return nil
    }

    /// Resets VmHWM to the current RSS (Linux) and returns that RSS.
    static func resetHighWater() -> Int? {
        guard FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs") else { return nil }
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        return status("VmRSS")
    }
}
