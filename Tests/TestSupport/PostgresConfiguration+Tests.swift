import Postgres

extension PostgresConfiguration {
    /// Seconds a test may wait for PostgreSQL to accept one connection.
    ///
    /// `make test` runs every suite at once on a two-core machine: hundreds of connections and scratch databases are
    /// made while the compiler's test process and the server share the CPU, and a connection has taken longer than the
    /// service's 3-second default to be accepted. The tests are about behaviour, not connect latency.
    public static let testConnectTimeoutSeconds = 30

    /// A configuration for a test's client: the service's defaults, with a connect timeout and a pool wait suited to a
    /// fully loaded test run.
    public static func forTests(url: String, poolSize: Int = 4, acquireTimeout: Duration = .seconds(30)) -> PostgresConfiguration {
        PostgresConfiguration(url: url, poolSize: poolSize, acquireTimeout: acquireTimeout, connectTimeoutSeconds: testConnectTimeoutSeconds)
    }
}
