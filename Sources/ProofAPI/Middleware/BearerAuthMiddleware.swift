import Foundation
import HTTPTypes
import Hummingbird
import ProofStore

/// Authenticates `Authorization: Bearer <token>` against the API keys; a missing, unknown or
/// revoked key is 401 (with `WWW-Authenticate: Bearer`). Roles are checked by each route.
///
/// Successful look-ups are served from `cache` while it is live (``AuthenticationCache``: a
/// revocation empties it on every server as soon as PostgreSQL's notification arrives). Failures
/// are counted per client address by `failures`, which answers 429 before the database once an
/// address has used up its burst, and 401 at once for a token it recently found unknown.
public struct BearerAuthMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    let keys: APIKeyRepository
    let cache: AuthenticationCache
    let failures: AuthenticationFailureGuard

    /// Creates the middleware over the key store, a cache of its look-ups and the failure guard.
    init(keys: APIKeyRepository, cache: AuthenticationCache, failures: AuthenticationFailureGuard) {
        self.keys = keys
        self.cache = cache
        self.failures = failures
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = context.clientAddress
        let token = request.headers[.authorization].flatMap(Self.bearerToken)
        let tokenHash = token.map(APIKeyRepository.hash)
        let actor: Actor
        if let tokenHash, let cached = cache.actor(forTokenHash: tokenHash) {
            actor = cached
        } else {
            if let seconds = failures.retryAfter(address) {
                throw Problem(.tooManyRequests, code: "rate_limited",
                              detail: "Too many failed authentications from this address. Retry after \(seconds) s.",
                              headers: [.retryAfterHeader: String(seconds)])
            }
            guard let token, let tokenHash else {
                failures.recordFailure(address)
                throw Self.unauthorized(request.headers[.authorization] == nil
                    ? "An API key is required: Authorization: Bearer <token>." : "The Authorization header must be: Bearer <token>.")
            }
            let generation = cache.generation
            guard !failures.isKnownUnknown(tokenHash), let found = try await keys.authenticate(token: token) else {
                failures.recordFailure(address, unknownTokenHash: tokenHash)
                throw Self.unauthorized("The API key is unknown or revoked.")
            }
            cache.remember(found, forTokenHash: tokenHash, generation: generation)
            actor = found
        }
        var context = context
        context.actor = actor
        context.credential = token.map(ActorCredential.init)
        context.logger[metadataKey: "api_key"] = .string(actor.keyID.uuidString.lowercased())
        return try await next(request, context)
    }

    /// The token of a `Bearer <token>` header; nil when the header has another form.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    static func unauthorized(_ detail: String) -> Problem {
        Problem(.unauthorized, code: "unauthorized", detail: detail, headers: [.wwwAuthenticate: "Bearer"])
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key`.
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// `Idempotent-Replayed`.
    public static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}
