import Hummingbird

/// Refuses a path that carries a control character, raw or percent-encoded (`%00`…`%1F`, `%7F`),
/// with 400 `invalid_path`: no route or console file has one, and a NUL in a file path is how
/// `/index.html%00.js` came to be served as JavaScript.
struct PathGuardMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !Self.hasControlCharacter(request.uri.path) else {
            throw Problem.badRequest("The path contains a control character.", code: "invalid_path")
        }
        return try await next(request, context)
    }

    /// Whether `path` holds a byte below 0x20 or 0x7F, as itself or as a `%XX` escape.
    static func hasControlCharacter(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x7F { return true }
            if b == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) {
                let decoded = high << 4 | low
                if decoded < 0x20 || decoded == 0x7F { return true }
                i += 3
                continue
            }
            i += 1
        }
        return false
    }

    static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
