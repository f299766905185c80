import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

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
    /// Statements still queued (``PostgresSession/enqueue(_:_:check:)``) when `body` returns are
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
        session.enqueue(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
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

/// A leased connection: statements run in order, each on the client's thread pool.
///
/// Statements may also be queued with ``enqueue(_:_:check:)``: they are sent with the next
/// statement (or the commit, or when the lease ends) in one round trip.
public struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let threadPool: NIOThreadPool
    private let queued = StatementQueue()

    init(connection: PostgresConnection, threadPool: NIOThreadPool) {
        self.connection = connection
        self.threadPool = threadPool
    }

    /// Runs one parameterised statement, after any queued ones in the same round trip, and returns
    /// its rows. An error of a queued statement (or of its `check`) is thrown here.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresResult {
        try await send(queued.takeAll(), then: PostgresStatement(sql, parameters)).last!
    }

    /// Runs one parameterised statement, ignoring rows.
    public func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws {
        try await query(sql, parameters)
    }

    /// Queues a statement to be sent with the next statement of this session (or the commit, or
    /// the end of the lease) in one round trip, saving the wait for its answer. `check` sees its
    /// result then, and may throw; that error, like the statement's own, is thrown by the call
    /// that sent it. Use it for statements whose result the caller does not need before its next one.
    public func enqueue(_ sql: String, _ parameters: [any PostgresBindable] = [],
                        check: (@Sendable (PostgresResult) throws -> Void)? = nil) {
        queued.append(QueuedStatement(statement: PostgresStatement(sql, parameters), check: check))
    }

    /// Sends the queued statements, if any.
    func flush() async throws {
        let pending = queued.takeAll()
        if !pending.isEmpty { _ = try await send(pending) }
    }

    /// Forgets the queued statements (the work they belonged to failed).
    func discardQueued() {
        _ = queued.takeAll()
    }

    /// Sends `pending`, then `last`, in one round trip (a single statement goes on its own, a
    /// pipeline otherwise), runs the checks, and returns every statement's result.
    private func send(_ pending: [QueuedStatement], then last: PostgresStatement? = nil) async throws -> [PostgresResult] {
        let statements = pending.map(\.statement) + (last.map { [$0] } ?? [])
        let connection = self.connection
        let results: [PostgresResult]
        do {
            results = try await threadPool.runIfActive { try connection.pipeline(statements) }
        } catch {
            throw PostgresClient.normalise(error)
        }
        for (item, result) in zip(pending, results) { try item.check?(result) }
        return results
    }

    /// Runs a trusted multi-statement script (migrations only; never user input).
    public func executeScript(_ sql: String) async throws {
        try await flush()
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

/// A statement waiting to be sent, and what to check in its result.
struct QueuedStatement: Sendable {
    var statement: PostgresStatement
    var check: (@Sendable (PostgresResult) throws -> Void)?
}

/// The statements a session has queued. A session is used by one task at a time; the lock only
/// makes that safe to state to the compiler.
final class StatementQueue: Sendable {
    private let items = Mutex<[QueuedStatement]>([])

    func append(_ item: QueuedStatement) {
        items.withLock { $0.append(item) }
    }

    func takeAll() -> [QueuedStatement] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
