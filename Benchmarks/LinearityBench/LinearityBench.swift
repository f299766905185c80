import Archive
import Foundation
import ProofService
import SignatureKit

/// `linearity-bench`: every parser a client's bytes reach, fed adversarial inputs of size n and 4n;
/// the CPU time ratio of the two is reported per shape (about 4 for linear cost, 16 for quadratic)
/// and the run fails when any ratio exceeds the bound (default 6).
///
///     swift run -c release linearity-bench [--scale N] [--bound R] [--repeats K]
///
/// Each shape is built here (no files), sized so that 4n stays inside the request body limit
/// (1 MiB) the server applies before any parser runs. Times are the thread's CPU time, the best
/// of `repeats` runs, so a busy machine inflates them less than wall-clock time would.
@main
struct LinearityBench {
    struct Shape {
        var name: String
        /// The input of size "units" (units are the shape's own: attributes, members, points...).
        var make: (Int) -> [UInt8]
        /// Parses one input; errors are expected for refused shapes and ignored.
        var parse: ([UInt8]) -> Void
        /// Units for n (4n is measured too).
        var units: Int
    }

    static func main() {
        var scale = 1.0, bound = 6.0, repeats = 3
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            switch flag {
            case "--scale": scale = Double(arguments.popFirst() ?? "") ?? scale
            case "--bound": bound = Double(arguments.popFirst() ?? "") ?? bound
            case "--repeats": repeats = Int(arguments.popFirst() ?? "") ?? repeats
            default:
                FileHandle.standardError.write(Data("linearity-bench: unknown option \(flag)\n".utf8))
                exit(2)
            }
        }
        print("linearity-bench: CPU time of each parser at n and 4n, best of \(repeats); bound \(bound)")
        print("| shape | n | bytes at n | bytes at 4n | ms at n | ms at 4n | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        var failed: [String] = []
        let shapes = Self.shapes
        for shape in shapes {
            let n = max(1, Int(Double(shape.units) * scale))
            let small = shape.make(n), large = shape.make(4 * n)
            // Each measurement repeats the parse often enough to last about 20 ms at n, so timer
            // resolution and a neighbour's burst weigh little; 4n repeats it as often.
            let loops = max(1, Int(0.02 / max(best(1) { shape.parse(small) }, 1e-6)))
            // n and 4n alternate, so whatever the process went through before weighs on both alike.
            var t1 = Double.infinity, t4 = Double.infinity
            for _ in 0..<max(1, repeats) {
                t1 = min(t1, best(1) { for _ in 0..<loops { shape.parse(small) } } / Double(loops))
                t4 = min(t4, best(1) { for _ in 0..<loops { shape.parse(large) } } / Double(loops))
            }
            let ratio = t4 / max(t1, 1e-9)
            print("| \(shape.name) | \(n) | \(small.count) | \(large.count) | \(format(t1 * 1000)) | \(format(t4 * 1000)) | \(format(ratio)) |")
            if ratio > bound { failed.append(shape.name) }
        }
        // The finding itself: an upload whose InkML puts 80,000 attributes on one element.
        let attributes = (0..<80_000).map { "a\($0)='1'" }.joined(separator: " ")
        let finding = Array(#"{"signer":{"name":"Ada"},"captured_at":"2025-03-01T14:05:09Z","inkml":"<ink><trace \#(attributes) a0='2'>1 1</trace></ink>"}"#.utf8)
        let findingMs = best(repeats) { parseUpload(finding) } * 1000
        print("\nThe finding: an InkML upload with 80,000 attributes on one element (\(finding.count) bytes) is refused in "
            + "\(format(findingMs)) ms of CPU (bound 100 ms).")
        if findingMs > 100 { failed.append("80,000 attributes") }
        let result = failed.isEmpty ? "ok" : "superlinear: " + failed.joined(separator: ", ")
        print("RESULT {\"run\":\"linearity\",\"ok\":\(failed.isEmpty),\"shapes\":\(shapes.count),\"bound\":\(bound),\"detail\":\"\(result)\"}")
        exit(failed.isEmpty ? 0 : 1)
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }

    /// The thread's CPU seconds for the fastest of `repeats` runs of `body`.
    static func best(_ repeats: Int, _ body: () -> Void) -> Double {
        var fastest = Double.infinity
        for _ in 0..<max(1, repeats) {
            let start = cpuSeconds()
            body()
            fastest = min(fastest, cpuSeconds() - start)
        }
        return fastest
    }

    static func cpuSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    static let parser = InkParser()

    /// An upload body around `member` (the rest of the envelope is valid).
    static func upload(_ members: String, ink: String = SyntheticInk.json(points: 40)) -> [UInt8] {
        Array(#"{"signer":{"name":"Ada"},"captured_at":"2025-03-01T14:05:09Z",\#(members)"ink":\#(ink)}"#.utf8)
    }

    static func parseUpload(_ body: [UInt8]) { _ = try? ProofUpload.parse(body, parser: parser) }

    static var shapes: [Shape] { [
        Shape(name: "InkML: attributes on one element, a repeat last", make: { n in
            var xml = "<ink xmlns=\"http://www.w3.org/2003/InkML\"><trace "
            for i in 0..<n { xml += "a\(i)=\"1\" " }
            xml += "a0=\"2\">10 10, 20 20</trace></ink>"
            return Array(xml.utf8)
        }, parse: { _ = try? parser.parse($0, format: .inkml) }, units: 5_000),
        Shape(name: "InkML: sibling elements", make: { n in
            Array(("<ink xmlns=\"http://www.w3.org/2003/InkML\">" + String(repeating: "<x a=\"1\"/>", count: n)
                + "<trace>10 10, 20 20</trace></ink>").utf8)
        }, parse: { _ = try? parser.parse($0, format: .inkml) }, units: 15_000),
        Shape(name: "InkML: a trace of many points", make: { n in
            let points = (0..<n).map { "\($0 % 500) \($0 % 300)" }.joined(separator: ", ")
            return Array("<ink xmlns='http://www.w3.org/2003/InkML'><trace>\(points)</trace></ink>".utf8)
        }, parse: { _ = try? parser.parse($0, format: .inkml) }, units: 10_000),
        Shape(name: "InkML in an upload: a trace of many points", make: { n in
            let points = (0..<n).map { "\($0 % 500) \($0 % 300)" }.joined(separator: ", ")
            let xml = "<ink xmlns='http://www.w3.org/2003/InkML'><trace>\(points)</trace></ink>"
            return Array(#"{"signer":{"name":"Ada"},"captured_at":"2025-03-01T14:05:09Z","inkml":"\#(xml)"}"#.utf8)
        }, parse: parseUpload, units: 10_000),
        Shape(name: "upload: unknown top-level members, a repeat last", make: { n in
            upload((0..<n).map { "\"m\($0)\":0," }.joined() + "\"m0\":1,")
        }, parse: parseUpload, units: 4_000),
        Shape(name: "upload: members of one nested object", make: { n in
            upload("\"device\":{" + (0..<n).map { "\"k\($0)\":\"v\"" }.joined(separator: ",") + "},")
        }, parse: parseUpload, units: 4_000),
        Shape(name: "upload: a string of \\u escapes", make: { n in
            upload("\"note\":\"" + String(repeating: "\\u00e9", count: n) + "\",")
        }, parse: parseUpload, units: 30_000),
        Shape(name: "upload: nested arrays at the depth limit, side by side", make: { n in
            let deep = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
            return upload("\"x\":[" + Array(repeating: deep, count: n).joined(separator: ",") + "],")
        }, parse: parseUpload, units: 1_200),
        Shape(name: "upload: ink points", make: { n in
            upload("", ink: SyntheticInk.json(points: n))
        }, parse: parseUpload, units: 6_000),
        Shape(name: "upload: signature_pad point objects", make: { n in
            let points = (0..<n).map { #"{"x":\#($0 % 500),"y":\#($0 % 300),"time":\#($0 * 8)}"# }.joined(separator: ",")
            return Array(#"{"signer":{"name":"Ada"},"captured_at":"2025-03-01T14:05:09Z","canvas":{"width":600,"height":400},"signature_pad":[{"points":[\#(points)]}]}"#.utf8)
        }, parse: parseUpload, units: 6_000),
        Shape(name: "SVC2004: sample lines", make: { n in
            Array(("\(n)\n" + (0..<n).map { "\(1000 + $0 % 3000) \(2000 + $0 % 1000) \($0 * 10) 1" }.joined(separator: "\n")).utf8)
        }, parse: { _ = try? parser.parse($0, format: .svc2004) }, units: 10_000),
        Shape(name: "ZIP: central directory entries", make: { n in
            var zip = ZipArchiveWriter(), bytes: [UInt8] = []
            for i in 0..<n { bytes += try! zip.add("f\(i)", contents: [], modified: Date(timeIntervalSince1970: 1_700_000_000), compress: false) }
            return bytes + (try! zip.finish())
        }, parse: { _ = try? ZipArchiveReader($0).entries }, units: 3_000),
    ] }
}

/// A synthetic ink/v1 document with `points` points in strokes of 200.
enum SyntheticInk {
    static func json(points: Int) -> String {
        var strokes: [String] = []
        var remaining = max(points, 10), t = 0
        while remaining > 0 {
            let count = min(200, remaining)
            remaining -= count
            var stroke: [String] = []
            for i in 0..<count {
                t += 8
                stroke.append("[\(50 + (i * 7) % 500),\(50 + (i * 13) % 300),\(t)]")
            }
            strokes.append("[" + stroke.joined(separator: ",") + "]")
        }
        return #"{"canvas":{"width":600,"height":400},"strokes":["# + strokes.joined(separator: ",") + "]}"
    }
}
