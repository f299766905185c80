import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Postgres
import ProofService
import ProofStore
import ServiceLifecycle

/// Assembles the Countersign HTTP application: middleware, routes and the database pool.
public enum CountersignApplication {
    /// The router with every route and middleware (also what `app.test(.router)` exercises).
    ///
    /// `metrics` receives the request and render metrics and is served at `GET /metrics`; nil leaves
    /// both out. Each call's default is a fresh registry, so applications never share counts.
    public static func router(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                              metrics: CountersignMetrics? = CountersignMetrics(),
                              checkpointKeys: CheckpointKeyProvider? = nil, dataKeys: DataKeyProvider? = nil,
                              readDatabase: PostgresClient? = nil) -> Router<AppRequestContext> {
        router(configuration: configuration, database: database, logger: logger, metrics: metrics, checkpointKeys: checkpointKeys,
               dataKeys: dataKeys, readDatabase: readDatabase, authenticationCache: nil)
    }

    static func router(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger, metrics: CountersignMetrics?,
                       checkpointKeys: CheckpointKeyProvider?, dataKeys: DataKeyProvider?, readDatabase: PostgresClient?,
                       authenticationCache: AuthenticationCache?) -> Router<AppRequestContext> {
        let router = Router(context: AppRequestContext.self)
        // First, so it also counts what later middleware answers (404s, problems, console files).
        if let metrics { router.add(middleware: RequestMetricsMiddleware(metrics: metrics)) }
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: AccessLogMiddleware())
        router.add(middleware: SecurityHeadersMiddleware(hstsMaxAgeSeconds: configuration.hstsMaxAgeSeconds))
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: PathGuardMiddleware())
        // The web console: files under `publicDirectory` answer whatever no route answered (404s only),
        // so the API always wins; paths containing ".." are refused by the middleware.
        router.add(middleware: FileMiddleware(configuration.publicDirectory, cacheControl: .init([(MediaType(type: .any), [.noCache])]),
                                              searchForIndexHtml: true, logger: logger))
        HealthRoutes(database: database).register(on: router)
        if let metrics { MetricsRoutes(metrics: metrics, database: database).register(on: router) }
        var api = APIRoutes(configuration: configuration, database: database, logger: logger, checkpointKeys: checkpointKeys, dataKeys: dataKeys,
                            readDatabase: readDatabase, metrics: metrics)
        api.authenticationCache = authenticationCache
        api.register(on: router)
        return router
    }

    /// HTTP/1.1 with the configured idle timeout — a connection that sends nothing for that long while
    /// idle or in the middle of a request (a slow or stalled client) is closed; a response being
    /// written (a long export) is never cut — and the request deadline: a body must arrive within
    /// `REQUEST_TIMEOUT_SECONDS`, and a response sent before its request's body was read closes the
    /// connection instead of reading the rest (``RequestDeadlineHandler``); and a response whose
    /// client stopped reading for `WRITE_TIMEOUT_SECONDS` closes the connection (``StalledWriteHandler``).
    public static func server(configuration: ServiceConfiguration) -> HTTPServerBuilder {
        let timeout = TimeAmount.seconds(Int64(configuration.requestTimeoutSeconds))
        let writeTimeout = TimeAmount.seconds(Int64(configuration.writeTimeoutSeconds))
        // An autoclosure: every connection gets handlers of its own.
        return .http1(configuration: .init(additionalChannelHandlers: [StalledWriteHandler(timeout: writeTimeout),
                                                                       RequestDeadlineHandler(timeout: timeout)],
                                           idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds))))
    }

    /// The application; the database clients and `services` (background work such as partition
    /// maintenance) run as its services and stop on shutdown.
    ///
    /// With `AUTH_CACHE_SECONDS` above 0, a ``Postgres/PostgresListener`` on
    /// ``ProofStore/APIKeyRepository/changeChannel`` (the primary database) runs as a service too:
    /// the API-key cache serves entries only while it listens, and empties on every notification.
    public static func make(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                            metrics: CountersignMetrics? = CountersignMetrics(),
                            checkpointKeys: CheckpointKeyProvider? = nil, dataKeys: DataKeyProvider? = nil, readDatabase: PostgresClient? = nil,
                            services background: [any Service] = []) -> some ApplicationProtocol {
        var services: [any Service] = [database] + (readDatabase.map { [$0] } ?? []) + background
        let cache = AuthenticationCache(timeToLive: configuration.policy.authenticationCacheTTL)
        if cache.timeToLive > .zero {
            services.append(keyChangeListener(url: database.configuration.url, cache: cache, logger: logger))
        }
        return Application(
            router: router(configuration: configuration, database: database, logger: logger, metrics: metrics,
                           checkpointKeys: checkpointKeys, dataKeys: dataKeys, readDatabase: readDatabase, authenticationCache: cache),
            server: server(configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "countersign"),
            services: services,
            logger: logger
        )
    }

    /// The listener that keeps `cache` live: invalidated on every change of `api_keys`, and not
    /// served while notifications could be missed.
    static func keyChangeListener(url: String, cache: AuthenticationCache, logger: Logger) -> PostgresListener {
        PostgresListener(url: url, channel: APIKeyRepository.changeChannel, logger: logger) { event in
            switch event {
            case .listening, .notified:
                cache.invalidate(live: true)
            case .lost:
                cache.invalidate(live: false)
            }
        }
    }
}
