#if canImport(SignatureKit)
import SignatureKit  // the renderer target links SignatureKit as a module (Fuzz/build.sh)
#endif

/// Shared helpers for the libFuzzer entry points. Each parser target is compiled into one module
/// with the SignatureKit sources, so internal API is reachable; the renderer target imports the
/// package's modules.
enum FuzzInput {
    /// Copies libFuzzer's input into an array (the parsers take `[UInt8]`).
    static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Checks the properties every successful parse must have: it passed validation, so it is
    /// within the limits, every coordinate is finite and it re-validates identically.
    static func checkParsed(_ doc: InkDocument, limits: InkLimits) {
        var points = 0
        for stroke in doc.strokes {
            points += stroke.points.count
            for p in stroke.points where !(p.x.isFinite && p.y.isFinite && p.t.isFinite) {
                fatalError("a parsed point is not finite: \(p)")
            }
        }
        if points > limits.maxPoints { fatalError("\(points) points passed a limit of \(limits.maxPoints)") }
        if doc.strokes.count > limits.maxStrokes { fatalError("\(doc.strokes.count) strokes passed the limit") }
        do { try InkValidator.validate(doc, limits: limits) } catch {
            fatalError("a parsed document fails re-validation: \(error)")
        }
    }
}
