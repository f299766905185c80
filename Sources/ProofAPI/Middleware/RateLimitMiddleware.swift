import Hummingbird

/// Refuses a key's request with 429 `rate_limited` and `Retry-After` when its token bucket is
/// empty. Runs after authentication, so it limits per API key; unauthenticated requests pass
/// (they fail at the route's permission check).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let actor = context.actor, case .limited(let seconds) = limiter.acquire(actor.keyID) {
            context.logger.notice("rate limited", metadata: ["retry_after_s": "\(seconds)"])
            throw Problem(.tooManyRequests, code: "rate_limited",
                          detail: "Too many requests for this API key (\(limiter.ratePerSecond.formatted()) per second, bursts of "
                              + "\(Int(limiter.burst))). Retry after \(seconds) s.",
                          headers: [.retryAfterHeader: String(seconds)])
        }
        return try await next(request, context)
    }
}
