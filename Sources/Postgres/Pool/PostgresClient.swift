import Logging
import NIOPosix
import ServiceLifecycle

/// A bounded pool of libpq connections with an async API.
///
/// Every blocking libpq call runs on a private `NIOThreadPool` with one thread per connection, so
/// neither the Swift cooperative pool nor a NIO event loop ever waits on the database. A
/// connection found broken is closed and replaced on next use, so the client survives a database
/// restart without restarting the process.
///
/// Run it as a `Service` (it closes its connections on graceful shutdown) or call `shutdown()`.
public final class PostgresClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: PostgresConfiguration
    private let threadPool: NIOThreadPool
    private let pool: ConnectionPool
    private let logger: Logger

    /// Creates the client; no connection is opened until first use.
    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "countersign.postgres")) {
        self.configuration = configuration
        self.threadPool = NIOThreadPool(numberOfThreads: configuration.poolSize)
        self.threadPool.start()
        self.pool = ConnectionPool(capacity: configuration.poolSize)
        self.logger = logger
    }

    /// Runs one statement on any pooled connection, its interpolated values bound.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresResult {
        try await withConnection { try await $0.query(query) }
    }

    /// Runs one parameterised statement (`$1`, `$2`, … in `sql`) on any pooled connection.
    ///
    /// Disfavoured so that an interpolated literal is a ``PostgresQuery`` (values bound), never
    /// text with the values spliced in.
    @_disfavoredOverload
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresResult {
        try await withConnection { try await $0.query(sql, parameters) }
    }

    /// Leases one connection for the duration of `body`; statements in `body` run in order on it.
    /// Statements still queued (``PostgresSession/enqueue(_:check:)``) when `body` returns are
    /// sent before the connection goes back; when `body` throws they are dropped.
    public func withConnection<T: Sendable>(_ body: (PostgresSession) async throws -> T) async throws -> T {
        let connection = try await lease()
        let session = PostgresSession(connection: connection, threadPool: threadPool)
        do {
            let value = try await body(session)
            try await session.flush()
            await giveBack(connection)
            return value
        } catch {
            session.discardQueued()
            await giveBack(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// `BEGIN` is not a round trip of its own: it is queued and goes to the server together with
    /// the first statement of `body`, and `COMMIT` goes together with whatever `body` left queued.
    ///
    /// `isolation` is an SQL isolation level such as `"SERIALIZABLE"` (default: the server's, READ COMMITTED).
    ///
    /// With `retryingStalePlans`, a transaction that failed because a migration made one of its
    /// prepared statements stale (``PostgresError/Kind/stalePreparedStatement``: a replica still
    /// running while another migrates) runs again on the same connection, where that statement is
    /// now prepared afresh; the server rolled the failed attempt back. Each failure drops one of the
    /// connection's statements, so it ends. `body` must then be safe to run more than once: database
    /// work only, nothing written elsewhere (an export that streams as it reads is not).
    public func withTransaction<T: Sendable>(isolation: String? = nil, retryingStalePlans: Bool = false,
                                             _ body: (PostgresSession) async throws -> T) async throws -> T {
        try await withConnection { session in
            var attempts = 1
            while true {
                do {
                    return try await transaction(in: session, isolation: isolation, body)
                } catch let error as PostgresError where retryingStalePlans && error.kind == .stalePreparedStatement
                                                          && attempts <= PostgresConnection.preparedStatementLimit {
                    attempts += 1
                    logger.info("transaction ran again: a migration changed a table under a prepared statement",
                                metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// One attempt of ``withTransaction(isolation:retryingStalePlans:_:)`` on `session`.
    private func transaction<T: Sendable>(in session: PostgresSession, isolation: String?,
                                          _ body: (PostgresSession) async throws -> T) async throws -> T {
        let begin: PostgresQuery = isolation.map { "BEGIN ISOLATION LEVEL \(unescaped: $0)" } ?? "BEGIN"
        session.enqueue(begin)
        do {
            let value = try await body(session)
            try await session.execute("COMMIT")
            return value
        } catch {
            session.discardQueued()
            // A failed statement pipelined before COMMIT leaves the transaction open and failed.
            if session.connection.isInTransaction {
                do { try await session.execute("ROLLBACK") } catch {
                    logger.warning("rollback failed", metadata: ["error": "\(error)"])
                }
            }
            throw error
        }
    }

    /// True when a fresh round trip to the database succeeds within `timeout`.
    public func isReachable(timeout: Duration = .seconds(2)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await self.query("SELECT 1")) != nil }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Pool counters (capacity, open, idle, waiting, and cumulative waits and timeouts): one hop to
    /// the pool's actor, nothing on the query path; read by `/metrics` at scrape time.
    public var statistics: PostgresPoolStatistics {
        get async { await pool.statistics }
    }

    /// Closes idle connections, fails waiters and stops the thread pool. Leased connections close as they return.
    public func shutdown() async {
        let connections = await pool.close()
        _ = try? await threadPool.runIfActive { withExtendedLifetime(connections) {} }
        try? await threadPool.shutdownGracefully()
    }

    private func lease() async throws -> PostgresConnection {
        switch try await pool.acquire(timeout: configuration.acquireTimeout) {
        case .connection(let connection):
            return connection
        case .openSlot:
            let configuration = self.configuration
            do {
                return try await threadPool.runIfActive {
                    try PostgresConnection(url: configuration.url, connectTimeout: configuration.connectTimeoutSeconds,
                                           applicationName: configuration.applicationName)
                }
            } catch {
                await pool.discard()
                logger.warning("database connect failed", metadata: ["error": "\(error)"])
                throw Self.normalise(error)
            }
        }
    }

    private func giveBack(_ connection: PostgresConnection) async {
        if connection.isBroken || !connection.isIdle {
            logger.notice("discarding a database connection that is broken or not idle")
            await pool.discard()
            _ = try? await threadPool.runIfActive { withExtendedLifetime(connection) {} }
        } else {
            await pool.checkIn(connection)
        }
    }

    static func normalise(_ error: any Error) -> any Error {
        if error is NIOThreadPoolError.ThreadPoolInactive {
            return PostgresError(.poolClosed, message: "the connection pool is shut down")
        }
        return error
    }
}

extension PostgresClient: Service {
    /// Waits for graceful shutdown, then closes the pool.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}
