import Foundation

/// Tunables of the `/v1` API that are not part of ``ServiceConfiguration``.
public struct APIPolicy: Sendable, Equatable {
    /// A proof further than this from the destination is flagged `outside_geofence`, and an
    /// accuracy worse than this `poor_location_accuracy` (`GEOFENCE_RADIUS_M`, default 200).
    public var geofenceRadiusMeters: Double
    /// `captured_at` further ahead of the server clock than this is flagged `clock_ahead` (5 minutes).
    public var clockAheadTolerance: TimeInterval
    /// Largest page of `GET /v1/deliveries`.
    public var maxPageSize: Int
    /// Page size when `limit` is absent.
    public var defaultPageSize: Int
    /// How long a successful API-key look-up is reused (`AUTH_CACHE_SECONDS`, default 0: every
    /// request asks the database, so a revoked key is refused at once).
    public var authenticationCacheTTL: Duration
    /// Sustained requests per second per API key (`RATE_LIMIT_PER_SECOND`, default 50; 0 turns limiting off).
    public var rateLimitPerSecond: Double
    /// Requests a key may make at once (`RATE_LIMIT_BURST`, default 100).
    public var rateLimitBurst: Double

    /// Creates a policy with the documented defaults.
    public init(geofenceRadiusMeters: Double = 200, clockAheadTolerance: TimeInterval = 300,
                maxPageSize: Int = 500, defaultPageSize: Int = 50, authenticationCacheTTL: Duration = .zero,
                rateLimitPerSecond: Double = 50, rateLimitBurst: Double = 100) {
        self.geofenceRadiusMeters = geofenceRadiusMeters
        self.clockAheadTolerance = clockAheadTolerance
        self.maxPageSize = maxPageSize
        self.defaultPageSize = defaultPageSize
        self.authenticationCacheTTL = authenticationCacheTTL
        self.rateLimitPerSecond = rateLimitPerSecond
        self.rateLimitBurst = rateLimitBurst
    }

    /// The defaults, with `GEOFENCE_RADIUS_M`, `AUTH_CACHE_SECONDS`, `RATE_LIMIT_PER_SECOND` and `RATE_LIMIT_BURST`
    /// from the environment when they are valid numbers.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> APIPolicy {
        var policy = APIPolicy()
        if let raw = environment["GEOFENCE_RADIUS_M"], let radius = Double(raw), radius.isFinite, radius > 0 {
            policy.geofenceRadiusMeters = radius
        }
        if let raw = environment["AUTH_CACHE_SECONDS"], let seconds = Double(raw), seconds.isFinite, seconds >= 0, seconds <= 300 {
            policy.authenticationCacheTTL = .milliseconds(Int64(seconds * 1000))
        }
        if let raw = environment["RATE_LIMIT_PER_SECOND"], let rate = Double(raw), rate.isFinite, rate >= 0 {
            policy.rateLimitPerSecond = rate
        }
        if let raw = environment["RATE_LIMIT_BURST"], let burst = Double(raw), burst.isFinite, burst >= 1 {
            policy.rateLimitBurst = burst
        }
        return policy
    }
}
