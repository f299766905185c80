import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Postgres

/// Assembles the Countersign HTTP application: middleware, routes and the database pool.
public enum CountersignApplication {
    /// The router with every route and middleware (also what `app.test(.router)` exercises).
    ///
    /// `metrics` receives the request and render metrics and is served at `GET /metrics`; nil leaves
    /// both out. Each call's default is a fresh registry, so applications never share counts.
    public static func router(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                              metrics: CountersignMetrics? = CountersignMetrics(),
                              checkpointKeys: CheckpointKeyProvider? = nil, readDatabase: PostgresClient? = nil) -> Router<AppRequestContext> {
        let router = Router(context: AppRequestContext.self)
        // First, so it also counts what later middleware answers (404s, problems, console files).
        if let metrics { router.add(middleware: RequestMetricsMiddleware(metrics: metrics)) }
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: AccessLogMiddleware())
        router.add(middleware: ProblemMiddleware())
        // The web console: files under `publicDirectory` answer whatever no route answered (404s only),
        // so the API always wins; paths containing ".." are refused by the middleware.
        router.add(middleware: FileMiddleware(configuration.publicDirectory, cacheControl: .init([(MediaType(type: .any), [.noCache])]),
                                              searchForIndexHtml: true, logger: logger))
        HealthRoutes(database: database).register(on: router)
        if let metrics { MetricsRoutes(metrics: metrics, database: database).register(on: router) }
        APIRoutes(configuration: configuration, database: database, logger: logger, checkpointKeys: checkpointKeys,
                  readDatabase: readDatabase).register(on: router)
        return router
    }

    /// HTTP/1.1 with the configured idle timeout: a connection that sends nothing for that long while
    /// idle or in the middle of a request (a slow or stalled client) is closed; a response being
    /// written (a long export) is never cut.
    public static func server(configuration: ServiceConfiguration) -> HTTPServerBuilder {
        .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds))))
    }

    /// The application; the database clients run as its services and close on shutdown.
    public static func make(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                            metrics: CountersignMetrics? = CountersignMetrics(),
                            checkpointKeys: CheckpointKeyProvider? = nil, readDatabase: PostgresClient? = nil) -> some ApplicationProtocol {
        Application(
            router: router(configuration: configuration, database: database, logger: logger, metrics: metrics,
                           checkpointKeys: checkpointKeys, readDatabase: readDatabase),
            server: server(configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "countersign"),
            services: [database] + (readDatabase.map { [$0] } ?? []),
            logger: logger
        )
    }
}
