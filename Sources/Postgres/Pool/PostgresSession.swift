import NIOPosix

/// A leased connection: statements run in order, each on the client's thread pool.
///
/// Statements may also be queued with ``enqueue(_:check:)``: they are sent with the next
/// statement (or the commit, or when the lease ends) in one round trip.
public struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let threadPool: NIOThreadPool
    private let queued = StatementQueue()

    init(connection: PostgresConnection, threadPool: NIOThreadPool) {
        self.connection = connection
        self.threadPool = threadPool
    }

    /// Runs one statement, after any queued ones in the same round trip, and returns its rows.
    /// An error of a queued statement (or of its `check`) is thrown here.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresResult {
        try await send(queued.takeAll(), then: PostgresStatement(query)).last!
    }

    /// Runs one statement, ignoring rows.
    public func execute(_ query: PostgresQuery) async throws {
        try await self.query(query)
    }

    /// Queues a statement to be sent with the next statement of this session (or the commit, or
    /// the end of the lease) in one round trip, saving the wait for its answer. `check` sees its
    /// result then, and may throw; that error, like the statement's own, is thrown by the call
    /// that sent it. Use it for statements whose result the caller does not need before its next one.
    public func enqueue(_ query: PostgresQuery, check: (@Sendable (PostgresResult) throws -> Void)? = nil) {
        queued.append(QueuedStatement(statement: PostgresStatement(query), check: check))
    }

    // The forms below take SQL with numbered placeholders and a separate array of values. They are
    // disfavoured so that an interpolated literal is a ``PostgresQuery`` (values bound), never text
    // with the values spliced in.

    /// Like the `PostgresQuery` form, for SQL with `$1`, `$2`, … and their values.
    @_disfavoredOverload
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresResult {
        try await send(queued.takeAll(), then: PostgresStatement(sql, parameters)).last!
    }

    /// Like the `PostgresQuery` form, for SQL with `$1`, `$2`, … and their values.
    @_disfavoredOverload
    public func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws {
        try await query(sql, parameters)
    }

    /// Like the `PostgresQuery` form, for SQL with `$1`, `$2`, … and their values. The values are
    /// not optional here: with a trailing `check` closure Swift would otherwise pick this form for
    /// an interpolated literal, despite the disfavouring.
    @_disfavoredOverload
    public func enqueue(_ sql: String, _ parameters: [any PostgresBindable],
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
