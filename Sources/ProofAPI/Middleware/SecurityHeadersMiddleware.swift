import HTTPTypes
import Hummingbird

/// Security headers on every response, whoever answered (a route, a problem, a console file):
/// the console's Content-Security-Policy as a header (a `<meta>` tag cannot forbid framing), no
/// MIME sniffing, no referrer, no caching of API answers (proof images and originals, which are
/// immutable and privately cacheable, keep their own `Cache-Control` and vary by `Authorization`), and HSTS when the operator
/// says the service is reached over TLS.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    /// The console's policy; `frame-ancestors 'none'` is what only a header can say.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// `Strict-Transport-Security: max-age=…` when positive (`HSTS_MAX_AGE_SECONDS`), else none.
    let hstsMaxAgeSeconds: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Inside this middleware errors have already become problem responses (ProblemMiddleware).
        var response = try await next(request, context)
        apply(to: &response.headers, path: request.uri.path)
        return response
    }

    func apply(to headers: inout HTTPFields, path: String) {
        headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
        headers[.referrerPolicy] = "no-referrer"
        if hstsMaxAgeSeconds > 0 { headers[.strictTransportSecurity] = "max-age=\(hstsMaxAgeSeconds)" }
        if path.hasPrefix("/v1/"), headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        // A privately cacheable answer depends on who asked: a shared browser profile or a proxy
        // that ignores `private` must not hand one key's proof image to another key's request.
        if path.hasPrefix("/v1/"), headers[.cacheControl]?.contains("private") ?? false {
            let vary = headers[.vary] ?? ""
            if !vary.lowercased().contains("authorization") { headers[.vary] = vary.isEmpty ? "Authorization" : vary + ", Authorization" }
        }
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
