import Postgres

/// The database settings of a one-off command (`keys`, `migrate`, `export`, `verify`): unlike the
/// server's pool, which reconnects by itself, a command has one chance to connect, and whoever runs
/// it would rather wait on a busy host than fail. libpq gets 15 s per connect (the server's pool
/// keeps its 3 s), and a caller 30 s for a free connection.
extension PostgresConfiguration {
    static func forCommand(url: String, poolSize: Int = 1) -> PostgresConfiguration {
        PostgresConfiguration(url: url, poolSize: poolSize, acquireTimeout: .seconds(30), connectTimeoutSeconds: 15)
    }
}
