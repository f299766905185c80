import Hummingbird
import Postgres

/// `GET /metrics`: the Prometheus text exposition, without an API key (turn it off with
/// `METRICS_ENABLED=false`, or keep it off the public listener at the proxy).
public struct MetricsRoutes: Sendable {
    let metrics: CountersignMetrics
    let database: PostgresClient

    /// Creates the route over `metrics`; the pool gauges are read from `database`, the allocator's from
    /// the C library, at each scrape.
    public init(metrics: CountersignMetrics, database: PostgresClient) {
        self.metrics = metrics
        self.database = database
    }

    /// Adds the route to `router`.
    public func register(on router: Router<AppRequestContext>) {
        router.get("metrics") { _, _ in
            metrics.recordPool(await database.statistics)
            if let allocator = AllocatorSnapshot.now() { metrics.recordAllocator(allocator) }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }
}
