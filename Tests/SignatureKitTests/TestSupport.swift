import Foundation
import InkTestSupport
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
    thrownError(InkError.self, body)
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
