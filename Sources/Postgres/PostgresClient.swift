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

    /// Runs one parameterised statement on any pooled connection.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresResult {
        try await withConnection { try await $0.query(sql, parameters) }
    }

    /// Leases one connection for the duration of `body`; statements in `body` run in order on it.
    public func withConnection<T: Sendable>(_ body: (PostgresSession) async throws -> T) async throws -> T {
        let connection = try await lease()
        let session = PostgresSession(connection: connection, threadPool: threadPool)
        do {
            let value = try await body(session)
            await giveBack(connection)
            return value
        } catch {
            await giveBack(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// `isolation` is an SQL isolation level such as `"SERIALIZABLE"` (default: the server's, READ COMMITTED).
    public func withTransaction<T: Sendable>(isolation: String? = nil, _ body: (PostgresSession) async throws -> T) async throws -> T {
        try await withConnection { session in
            try await session.execute(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
            let value: T
            do {
                value = try await body(session)
            } catch {
                if !session.connection.isBroken {
                    do { try await session.execute("ROLLBACK") } catch {
                        logger.warning("rollback failed", metadata: ["error": "\(error)"])
                    }
                }
                throw error
            }
            try await session.execute("COMMIT")
            return value
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

/// A leased connection: statements run in order, each on the client's thread pool.
public struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let threadPool: NIOThreadPool

    /// Runs one parameterised statement and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresResult {
        let connection = self.connection
        do {
            return try await threadPool.runIfActive { try connection.query(sql, parameters) }
        } catch {
            throw PostgresClient.normalise(error)
        }
    }

    /// Runs one parameterised statement, ignoring rows.
    public func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws {
        try await query(sql, parameters)
    }

    /// Runs a trusted multi-statement script (migrations only; never user input).
    public func executeScript(_ sql: String) async throws {
        let connection = self.connection
        do {
            try await threadPool.runIfActive { try connection.executeScript(sql) }
        } catch {
            throw PostgresClient.normalise(error)
        }
    }

    /// The server process id of this connection.
    public var backendPID: Int32 { connection.backendPID }
}
