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
    /// How long a successful API-key look-up may be reused (`AUTH_CACHE_SECONDS`, default 60; 0:
    /// every request asks the database). Entries are served only while the server listens to
    /// `api_keys` changes, and a revocation empties the cache of every server when it commits
    /// (``AuthenticationCache``).
    public var authenticationCacheTTL: Duration
    /// Sustained requests per second per API key (`RATE_LIMIT_PER_SECOND`, default 50; 0 turns limiting off).
    public var rateLimitPerSecond: Double
    /// Requests a key may make at once (`RATE_LIMIT_BURST`, default 100).
    public var rateLimitBurst: Double
    /// Exports streaming at once; more get 503 `exports_busy` with `Retry-After` (default 2: each
    /// holds a database connection for its whole download).
    public var maxConcurrentExports: Int
    /// Longest an export may stream (`EXPORT_MAX_SECONDS`, default 3600): past it the stream ends
    /// short (a broken download) and its slot, connection and snapshot are freed, so partition
    /// upkeep and the other exports never wait behind one download for longer.
    public var maxExportDuration: Duration = .seconds(3600)
    /// Bytes of stored PNGs kept in memory for repeated fetches (`PNG_CACHE_MB`, default 32 MiB; 0 turns it off).
    public var pngCacheBytes: Int
    /// Failed authentications a client address may make per second on average
    /// (`AUTH_FAILURE_RATE_PER_SECOND`, default 2); beyond its burst, requests from that address
    /// without a cached valid key get 429 before the database is asked.
    public var authenticationFailureRatePerSecond: Double = 2
    /// Failed authentications a client address may make at once (`AUTH_FAILURE_BURST`, default 30).
    public var authenticationFailureBurst: Double = 30
    /// CPU-heavy jobs (ink parsing, rendering, SVG) waiting or running before new ones get 503
    /// `busy` (`CPU_QUEUE_LIMIT`, default 128).
    public var cpuQueueLimit: Int = 128
    /// CPU jobs one API key may have waiting or running (`CPU_PER_KEY_LIMIT`, default 64); a key
    /// runs at most all cores but one at once whatever this is.
    public var cpuPerKeyLimit: Int = 64
    /// The share of one core an API key's parsing and rendering may use over time
    /// (`CPU_SHARE_PER_KEY`, default 1: one core, with 2 s of CPU saved up at most); past it, 503
    /// `busy` with `Retry-After` until the share refills. A courier uses a small fraction of it; one
    /// key uploading for a whole fleet (a carrier's back end) reaches about half of it on 8 connections.
    public var cpuSharePerKey: Double = 1
    /// The share of one core that heavy jobs (bodies over 64 KiB, inks over 5,000 points: no real
    /// signature) of all keys together may use over time (`CPU_HEAVY_SHARE`, default
    /// ``CPUWorkPool/defaultHeavyShare``, 2 s saved up); one key's heavy jobs get half of it, one
    /// at a time. Past it, 503 `busy` with `Retry-After`, before a declared large body is read;
    /// ordinary uploads are not affected.
    public var cpuHeavyShare: Double = CPUWorkPool.defaultHeavyShare
    /// Seconds of heavy CPU saved up at most (2; not an environment setting: tests lower it to
    /// spend the share with one small job).
    public var cpuHeavyBurstSeconds: Double = 2
    /// Whether uploads are signed by device keys (`DEVICE_KEYS`, default `optional`: a signature
    /// present is verified; `required`: an upload without one is refused; `off`: the headers are
    /// ignored). docs/courier-guide.md §7.
    public var deviceKeys: DeviceKeyMode = .optional

    /// Creates a policy with the documented defaults.
    public init(geofenceRadiusMeters: Double = 200, clockAheadTolerance: TimeInterval = 300,
                maxPageSize: Int = 500, defaultPageSize: Int = 50, authenticationCacheTTL: Duration = .seconds(60),
                rateLimitPerSecond: Double = 50, rateLimitBurst: Double = 100, pngCacheBytes: Int = 32 << 20,
                maxConcurrentExports: Int = 2) {
        self.geofenceRadiusMeters = geofenceRadiusMeters
        self.clockAheadTolerance = clockAheadTolerance
        self.maxPageSize = maxPageSize
        self.defaultPageSize = defaultPageSize
        self.authenticationCacheTTL = authenticationCacheTTL
        self.rateLimitPerSecond = rateLimitPerSecond
        self.rateLimitBurst = rateLimitBurst
        self.pngCacheBytes = pngCacheBytes
        self.maxConcurrentExports = maxConcurrentExports
    }

    /// The defaults, with `GEOFENCE_RADIUS_M`, `AUTH_CACHE_SECONDS`, `RATE_LIMIT_PER_SECOND`, `RATE_LIMIT_BURST` and
    /// `PNG_CACHE_MB` from the environment. An invalid value is an error naming the variable;
    /// ``ServiceConfiguration/fromEnvironment(_:)`` reads the policy with this, so `serve` refuses to
    /// start with one.
    public static func parse(_ environment: [String: String]) throws -> APIPolicy {
        var policy = APIPolicy()
        func number(_ name: String, _ expected: String, _ accept: (Double) -> Bool) throws -> Double? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            guard let value = Double(raw), value.isFinite, accept(value) else {
                throw ConfigurationError(variable: name, value: raw, expected: expected)
            }
            return value
        }
        if let radius = try number("GEOFENCE_RADIUS_M", "a number of metres greater than 0", { $0 > 0 }) {
            policy.geofenceRadiusMeters = radius
        }
        if let seconds = try number("AUTH_CACHE_SECONDS", "a number of seconds in 0...300", { (0...300).contains($0) }) {
            policy.authenticationCacheTTL = .milliseconds(Int64(seconds * 1000))
        }
        if let rate = try number("RATE_LIMIT_PER_SECOND", "a number >= 0 (0 turns limiting off)", { $0 >= 0 }) {
            policy.rateLimitPerSecond = rate
        }
        if let burst = try number("RATE_LIMIT_BURST", "a number >= 1", { $0 >= 1 }) {
            policy.rateLimitBurst = burst
        }
        if let rate = try number("AUTH_FAILURE_RATE_PER_SECOND", "a number > 0", { $0 > 0 }) {
            policy.authenticationFailureRatePerSecond = rate
        }
        if let burst = try number("AUTH_FAILURE_BURST", "a number >= 1", { $0 >= 1 }) {
            policy.authenticationFailureBurst = burst
        }
        func count(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
            try number(name, "a whole number in \(range.lowerBound)...\(range.upperBound)",
                       { $0 == $0.rounded() && Double(range.lowerBound) <= $0 && $0 <= Double(range.upperBound) }).map { Int($0) }
        }
        if let seconds = try count("EXPORT_MAX_SECONDS", 10...86_400) { policy.maxExportDuration = .seconds(seconds) }
        if let limit = try count("CPU_QUEUE_LIMIT", 1...100_000) { policy.cpuQueueLimit = limit }
        if let limit = try count("CPU_PER_KEY_LIMIT", 1...10_000) { policy.cpuPerKeyLimit = limit }
        if let share = try number("CPU_SHARE_PER_KEY", "a share of one core in 0.01...64", { (0.01...64).contains($0) }) {
            policy.cpuSharePerKey = share
        }
        if let share = try number("CPU_HEAVY_SHARE", "a share of one core in 0.01...64", { (0.01...64).contains($0) }) {
            policy.cpuHeavyShare = share
        }
        if let megabytes = try number("PNG_CACHE_MB", "a whole number of MiB in 0...4096 (0 turns the cache off)",
                                      { (0...4096).contains($0) && $0 == $0.rounded() }) {
            policy.pngCacheBytes = Int(megabytes) << 20
        }
        if let raw = environment["DEVICE_KEYS"]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty {
            guard let mode = DeviceKeyMode(rawValue: raw) else {
                throw ConfigurationError(variable: "DEVICE_KEYS", value: raw, expected: "off, optional or required")
            }
            policy.deviceKeys = mode
        }
        return policy
    }
}
