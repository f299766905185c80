import Foundation
import HTTPTypes
import Postgres
import Prometheus
import ProofService
import ProofStore
import SignatureRender
import Synchronization

/// The service's Prometheus metrics, held in one explicit registry (not the process-global
/// swift-metrics system), so every application, and every test, counts on its own.
///
/// Series (all prefixed `countersign_`):
/// - `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route,status}`:
///   one count and one latency observation per request. `route` is the route *template*
///   (`/v1/deliveries/{reference}`), `static` for a console file, `unmatched` when no route matched;
///   `method` is one of the standard methods or `OTHER`. Cardinality is bounded by the route table.
/// - `signature_render_duration_seconds{purpose}` (reconstruct, lay out, rasterise) and
///   `png_encode_duration_seconds{purpose}`, with `purpose` `upload` or `resize`.
/// - `png_bytes`: size of each stored proof's PNG; `proofs_stored_total`: proofs this process stored.
/// - `audit_verifications_total{result}`: `ok` or the break kind (`hash_mismatch`, `gap`, ...).
/// - `db_pool_connections{state=in_use|idle}`, `db_pool_waiting`, `db_pool_capacity`,
///   `db_pool_waits_total`, `db_pool_timeouts_total`: the connection pool, read at scrape time.
/// - `malloc_bytes{state=in_use|free|mmapped}`: what the C allocator holds, read at scrape time
///   (``AllocatorSnapshot``; absent where the C library cannot tell).
///
/// Handlers find the metrics of the application serving them through ``current`` (a task local set
/// by the request middleware), so routes need no extra wiring.
public final class CountersignMetrics: ServiceMetrics {
    /// The metrics of the application serving the current request (set by the request middleware).
    @TaskLocal public static var current: CountersignMetrics?

    /// Why a PNG was rendered.
    public typealias RenderPurpose = ProofService.RenderPurpose

    /// The registry every series lives in; `countersign serve` also bootstraps swift-metrics over it.
    public let registry: PrometheusCollectorRegistry

    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private struct RequestSeries: Sendable {
        let count: Prometheus.Counter
        let duration: DurationHistogram
    }

    private struct PoolCounters {
        var waits = 0
        var timeouts = 0
    }

    private let requests = Mutex<[RequestKey: RequestSeries]>([:])
    private let renderDurations: [RenderPurpose: DurationHistogram]
    private let encodeDurations: [RenderPurpose: DurationHistogram]
    private let pngBytes: ValueHistogram
    private let proofsStored: Prometheus.Counter
    private let poolInUse: Gauge
    private let poolIdle: Gauge
    private let poolWaiting: Gauge
    private let poolCapacity: Gauge
    private let poolWaits: Prometheus.Counter
    private let poolTimeouts: Prometheus.Counter
    private let poolSeen = Mutex(PoolCounters())
    private let mallocInUse: Gauge
    private let mallocFree: Gauge
    private let mallocMmapped: Gauge

    static let requestBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]
    static let renderBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
    ]
    static let pngByteBuckets: [Double] = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131_072, 262_144, 524_288, 1_048_576]

    /// The HTTP methods that get their own `method` label; anything else is `OTHER`.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// Creates the metrics in `registry` (a new, empty one by default).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        let render = Self.named("signature_render_duration", unit: "seconds", help: "Time to reconstruct, lay out and rasterise a signature.")
        let encode = Self.named("png_encode_duration", unit: "seconds", help: "Time to encode a rasterised signature as PNG.")
        var renderDurations: [RenderPurpose: DurationHistogram] = [:]
        var encodeDurations: [RenderPurpose: DurationHistogram] = [:]
        for purpose in RenderPurpose.allCases {
            let labels = [("purpose", purpose.rawValue)]
            renderDurations[purpose] = registry.makeDurationHistogram(descriptor: render, labels: labels, buckets: Self.renderBuckets)
            encodeDurations[purpose] = registry.makeDurationHistogram(descriptor: encode, labels: labels, buckets: Self.renderBuckets)
        }
        self.renderDurations = renderDurations
        self.encodeDurations = encodeDurations
        self.pngBytes = registry.makeValueHistogram(
            descriptor: Self.named("png", unit: "bytes", help: "Size in bytes of the PNG stored with each proof."), buckets: Self.pngByteBuckets)
        self.proofsStored = registry.makeCounter(
            descriptor: Self.named("proofs_stored", unit: "total", help: "Proofs of delivery stored by this process."))
        let connections = Self.named("db_pool_connections", unit: "", help: "Database connections of the pool by state.")
        self.poolInUse = registry.makeGauge(descriptor: connections, labels: [("state", "in_use")])
        self.poolIdle = registry.makeGauge(descriptor: connections, labels: [("state", "idle")])
        self.poolWaiting = registry.makeGauge(
            descriptor: Self.named("db_pool_waiting", unit: "", help: "Callers waiting for a database connection at scrape time."))
        self.poolCapacity = registry.makeGauge(
            descriptor: Self.named("db_pool_capacity", unit: "", help: "Largest number of database connections."))
        self.poolWaits = registry.makeCounter(
            descriptor: Self.named("db_pool_waits", unit: "total", help: "Connection requests that found the pool exhausted and had to wait."))
        self.poolTimeouts = registry.makeCounter(
            descriptor: Self.named("db_pool_timeouts", unit: "total", help: "Connection requests that gave up waiting (acquire timeout)."))
        let malloc = Self.named("malloc", unit: "bytes", help: "Bytes the C allocator holds: in use by the program, freed but kept, of which in own mappings.")
        self.mallocInUse = registry.makeGauge(descriptor: malloc, labels: [("state", "in_use")])
        self.mallocFree = registry.makeGauge(descriptor: malloc, labels: [("state", "free")])
        self.mallocMmapped = registry.makeGauge(descriptor: malloc, labels: [("state", "mmapped")])
        for result in ["ok"] + Self.breakKinds {
            _ = auditCounter(result)
        }
    }

    /// `countersign_<metric>_<unit>` with its help text.
    static func named(_ metric: String, unit: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "countersign", metricName: metric, unitName: unit, helpText: help)
    }

    // Computed: the descriptor type is not Sendable, so it cannot be a stored static.
    static var requestCount: MetricNameDescriptor {
        named("http_requests", unit: "total", help: "HTTP requests by method, route template and status.")
    }
    static var requestDuration: MetricNameDescriptor {
        named("http_request_duration", unit: "seconds", help: "Time from routing a request to its response being ready.")
    }
    static var auditVerifications: MetricNameDescriptor {
        named("audit_verifications", unit: "total", help: "Audit-chain verifications by outcome (ok, or the kind of break found).")
    }

    // MARK: Recording

    /// Counts one request and records its latency under the route template.
    ///
    /// - Parameters:
    ///   - endpoint: Hummingbird's endpoint path (`/v1/deliveries/{reference}`, `FileMiddleware`, `NotFound` or nil).
    public func recordRequest(method: HTTPRequest.Method, endpoint: String?, status: Int, duration: Duration) {
        let key = RequestKey(method: Self.methodLabel(method), route: Self.routeLabel(endpoint), status: status)
        let series = requests.withLock { cache -> RequestSeries in
            if let series = cache[key] { return series }
            let labels = [("method", key.method), ("route", key.route), ("status", String(key.status))]
            let series = RequestSeries(
                count: registry.makeCounter(descriptor: Self.requestCount, labels: labels),
                duration: registry.makeDurationHistogram(descriptor: Self.requestDuration, labels: labels, buckets: Self.requestBuckets))
            cache[key] = series
            return series
        }
        series.count.increment()
        series.duration.record(duration)
    }

    /// Records how long the two halves of a PNG render took.
    public func recordRender(_ timings: RenderTimings, purpose: RenderPurpose) {
        renderDurations[purpose]?.record(timings.render)
        encodeDurations[purpose]?.record(timings.encode)
    }

    /// Counts a stored proof and the size of its PNG.
    public func recordProofStored(pngBytes count: Int) {
        proofsStored.increment()
        pngBytes.record(Double(count))
    }

    /// Counts one audit-chain verification by outcome (`ok` or the kind of break).
    public func recordAuditVerification(_ result: AuditVerification) {
        switch result {
        case .ok: auditCounter("ok").increment()
        case .broken(let found): auditCounter(found.kind.rawValue).increment()
        }
    }

    /// Counts `result` on the current request's metrics (if any) and returns it unchanged, so a route can wrap its call:
    /// `AuditVerificationResource(CountersignMetrics.observe(try await verifier.verify()))`.
    public static func observe(_ result: AuditVerification) -> AuditVerification {
        current?.recordAuditVerification(result)
        return result
    }

    /// Copies a pool snapshot into the pool gauges and counters.
    public func recordPool(_ statistics: PostgresPoolStatistics) {
        poolInUse.set(to: Double(statistics.inUse))
        poolIdle.set(to: Double(statistics.idle))
        poolWaiting.set(to: Double(statistics.waiting))
        poolCapacity.set(to: Double(statistics.capacity))
        let (waits, timeouts) = poolSeen.withLock { seen -> (Int, Int) in
            defer { seen = PoolCounters(waits: max(seen.waits, statistics.totalWaits), timeouts: max(seen.timeouts, statistics.totalTimeouts)) }
            return (statistics.totalWaits - seen.waits, statistics.totalTimeouts - seen.timeouts)
        }
        if waits > 0 { poolWaits.increment(by: Int64(waits)) }
        if timeouts > 0 { poolTimeouts.increment(by: Int64(timeouts)) }
    }

    /// Copies an allocator snapshot into the `malloc_bytes` gauges.
    public func recordAllocator(_ snapshot: AllocatorSnapshot) {
        mallocInUse.set(to: Double(snapshot.inUse))
        mallocFree.set(to: Double(snapshot.free))
        mallocMmapped.set(to: Double(snapshot.mmapped))
    }

    /// The exposition text (Prometheus text format 0.0.4).
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    // MARK: Labels

    static let breakKinds = ["hash_mismatch", "prev_mismatch", "gap", "proof_png_mismatch", "proof_body_mismatch", "proof_missing"]

    private func auditCounter(_ result: String) -> Prometheus.Counter {
        registry.makeCounter(descriptor: Self.auditVerifications, labels: [("result", result)])
    }

    /// The `method` label: a standard method, else `OTHER` (custom methods must not mint series).
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        knownMethods.contains(method.rawValue) ? method.rawValue : "OTHER"
    }

    /// The `route` label: the matched template, `static` for the console's files, else `unmatched`.
    static func routeLabel(_ endpoint: String?) -> String {
        guard let endpoint else { return "unmatched" }
        if endpoint == "FileMiddleware" { return "static" }
        return endpoint.hasPrefix("/") ? endpoint : "unmatched"
    }

    // MARK: Configuration

    /// Whether `/metrics` is served: `METRICS_ENABLED` (true/false, 1/0, yes/no, on/off; default true).
    public static func isEnabled(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        guard let raw = environment["METRICS_ENABLED"]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return true }
        switch raw.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: "METRICS_ENABLED", value: raw, expected: "true or false")
        }
    }
}
