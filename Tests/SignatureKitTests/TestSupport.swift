import Foundation
import Testing
import SignatureKit

/// Locates the shared real-ink corpus: `$COUNTERSIGN_CORPUS`, else `<repo>/../shared/corpus`
/// where `<repo>` is found from this file's path (symlinks resolved).
enum Corpus {
    static let directory: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["COUNTERSIGN_CORPUS"], !env.isEmpty {
            let url = URL(fileURLWithPath: env)
            return fm.fileExists(atPath: url.path) ? url : nil
        }
        let here = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        let repo = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = repo.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return fm.fileExists(atPath: url.path) ? url : nil
    }()

    static var isAvailable: Bool { directory != nil }

    /// Why corpus tests are skipped (shown by swift-testing).
    static let absentMessage: Comment =
        "real-ink corpus not found at <repo>/../shared/corpus; set COUNTERSIGN_CORPUS to run these tests"

    /// Files (not READMEs) in a corpus subfolder, sorted by name.
    static func files(in folder: String) -> [URL] {
        guard let dir = directory?.appendingPathComponent(folder),
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { dir.appendingPathComponent($0) }
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        Array(try Data(contentsOf: url))
    }
}

/// Runs `body` and returns the `InkError` it threw, or `nil` when it did not throw.
func inkError<T>(_ body: () throws -> T) -> InkError? {
    do {
        _ = try body()
        return nil
    } catch let error as InkError {
        return error
    } catch {
        Issue.record("unexpected non-InkError \(error)")
        return nil
    }
}

/// A smooth synthetic signature (no corpus needed): `strokes` strokes of `perStroke` points.
func syntheticDocument(strokes: Int = 5, perStroke: Int = 60, pressure: Bool = false) -> InkDocument {
    var out: [Stroke] = []
    var t = 0.0
    for s in 0..<strokes {
        var pts: [InkPoint] = []
        for i in 0..<perStroke {
            let a = Double(i) / Double(perStroke) * 2 * Double.pi
            let x = 40 + Double(s) * 100 + Double(i) * 1.2 + 25 * sin(a * 2 + Double(s))
            let y = 100 + 50 * sin(a * 3) * cos(Double(s) * 0.7)
            pts.append(InkPoint(x: x, y: y, t: t, pressure: pressure ? 0.5 + 0.4 * sin(a) : nil))
            t += 8
        }
        t += 150
        out.append(Stroke(points: pts))
    }
    return InkDocument(canvas: CanvasSize(width: 600, height: 200), strokes: out)
}

/// Signed area of a polygon through the on-curve points of a closed subpath (shoelace).
func onCurveArea(_ elements: [PathElement]) -> Double {
    var pts: [Point] = []
    for e in elements {
        switch e {
        case .move(let p), .line(let p): pts.append(p)
        case .quad(_, let p), .cubic(_, _, let p): pts.append(p)
        case .close: break
        }
    }
    var a = 0.0
    for i in 0..<pts.count {
        let p = pts[i], q = pts[(i + 1) % pts.count]
        a += p.x * q.y - q.x * p.y
    }
    return a / 2
}
