import Foundation
import HTTPTypes
import Hummingbird
import ProofStore

/// Authenticates `Authorization: Bearer <token>` against the API keys; a missing, unknown or
/// revoked key is 401 (with `WWW-Authenticate: Bearer`). Roles are checked by each route.
///
/// Successful look-ups are served from `cache` while it is live (``AuthenticationCache``: a
/// revocation empties it on every server as soon as PostgreSQL's notification arrives).
public struct BearerAuthMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    let keys: APIKeyRepository
    let cache: AuthenticationCache

    /// Creates the middleware over the key store and a cache of its look-ups.
    init(keys: APIKeyRepository, cache: AuthenticationCache) {
        self.keys = keys
        self.cache = cache
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw Self.unauthorized("An API key is required: Authorization: Bearer <token>.")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Self.unauthorized("The Authorization header must be: Bearer <token>.")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        let tokenHash = APIKeyRepository.hash(token)
        let actor: Actor
        if let cached = cache.actor(forTokenHash: tokenHash) {
            actor = cached
        } else {
            let generation = cache.generation
            guard let found = try await keys.authenticate(token: token) else {
                throw Self.unauthorized("The API key is unknown or revoked.")
            }
            cache.remember(found, forTokenHash: tokenHash, generation: generation)
            actor = found
        }
        var context = context
        context.actor = actor
        context.logger[metadataKey: "api_key"] = .string(actor.keyID.uuidString.lowercased())
        return try await next(request, context)
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
