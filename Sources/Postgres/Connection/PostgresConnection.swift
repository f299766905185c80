import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection. Owns its `PGconn` and closes it exactly once (also after a failed connect).
///
/// All methods block the calling thread. Never call them on the Swift cooperative pool or on a
/// NIO event loop: the `PostgresClient` runs them on its own thread pool, and guarantees that one
/// connection is used by one thread at a time (hence `@unchecked Sendable`).
public final class PostgresConnection: @unchecked Sendable {
    let handle: OpaquePointer  // internal for tests (ConnectionLossTests)
    /// Set when an error showed the connection cannot be used again.
    private(set) var isBroken = false
    /// Server-side prepared statements of this session, by SQL text and parameter types.
    private var prepared: [PreparedStatementKey: String] = [:]
    /// Statements prepared so far (names are never reused, even after one is deallocated).
    private var preparedCount = 0

    /// At most this many statements are prepared per connection; further distinct statements run
    /// unprepared (parsed and planned every time), so dynamically built SQL cannot grow it without bound.
    public static let preparedStatementLimit = 128

    /// Opens a connection from a libpq URL (`postgres://user:pass@host:port/db`; a host starting with
    /// `/`, percent-encoded or given as `?host=/dir`, is a unix-socket directory).
    ///
    /// `connectTimeout` bounds the connect itself; `applicationName` shows in `pg_stat_activity`.
    public init(url: String, connectTimeout: Int = 5, applicationName: String = "countersign") throws(PostgresError) {
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw PostgresError(.invalidConfiguration, message: "database URL must start with postgres:// or postgresql://")
        }
        let keys = ["dbname", "connect_timeout", "application_name", "client_encoding"]
        let values = [url, String(connectTimeout), applicationName, "UTF8"]
        var keyPointers = keys.map { strdup($0) } + [nil]
        var valuePointers = values.map { strdup($0) } + [nil]
        defer {
            keyPointers.forEach { free($0) }
            valuePointers.forEach { free($0) }
        }
        let connection: OpaquePointer? = keyPointers.withUnsafeMutableBufferPointer { keyBuffer in
            valuePointers.withUnsafeMutableBufferPointer { valueBuffer in
                keyBuffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: keyBuffer.count) { k in
                    valueBuffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: valueBuffer.count) { v in
                        PQconnectdbParams(k, v, 1)
                    }
                }
            }
        }
        guard let connection else {
            throw PostgresError(.connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresError.lastMessage(of: connection)
            PQfinish(connection)
            throw PostgresError(.connectionFailed, message: message)
        }
        self.handle = connection
        PQsetNoticeReceiver(connection, { _, _ in }, nil)  // notices are not errors; keep stderr clean
    }

    deinit {
        PQfinish(handle)
    }

    /// The server's backend process id (useful in tests and logs).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// True when libpq reports the connection healthy and the server has not closed it while idle.
    ///
    /// An idle connection should have nothing to read; a readable or hung-up socket means the server
    /// sent a termination notice or closed it (e.g. it restarted). Costs one non-blocking `poll`.
    public var isUsable: Bool {
        guard !isBroken, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        if ready == 0 { return true }
        return false
    }

    /// True when no transaction is open or failed on this connection.
    var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// True when the connection is usable and inside a transaction block (open or failed).
    var isInTransaction: Bool {
        guard !isBroken else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs one parameterised statement (`$1`, `$2`, ...); results come back in binary.
    ///
    /// A statement with parameters is prepared on this connection the first time it runs with
    /// those parameter types (PQprepare) and executed by name afterwards (PQexecPrepared), so the
    /// server parses and analyses it once per connection and may reuse its plan: on the upload
    /// path, parsing and planning were a large share of PostgreSQL's CPU per request (docs/decisions/0011-prepared-statements.md).
    /// A ``PostgresQuery`` keeps this cache effective: its text does not depend on its values.
    /// Statements without parameters (transaction control, scripts) always run unprepared.
    ///
    /// When a migration changed the result type of a prepared statement ("cached plan must not
    /// change result type", 0A000), the statement is dropped; outside a transaction it is prepared
    /// and run again at once (the failed attempt ran nothing), inside one the error is thrown as
    /// ``PostgresError/Kind/stalePreparedStatement`` (see ``PostgresClient/withTransaction(isolation:retryingStalePlans:_:)``).
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) throws(PostgresError) -> PostgresResult {
        try query(sql, try BoundParameters(parameters), retryingStalePlan: true)
    }

    private func query(_ sql: String, _ bound: BoundParameters, retryingStalePlan: Bool) throws(PostgresError) -> PostgresResult {
        let name = bound.count > 0 ? try preparedName(sql, types: bound.types) : nil
        let result: OpaquePointer? = bound.withValues { values in
            if let name {
                return PQexecPrepared(handle, name, Int32(bound.count), values, bound.lengths, bound.formats, 1)
            }
            return PQexecParams(handle, sql, Int32(bound.count), bound.types, values, bound.lengths, bound.formats, 1)
        }
        do {
            return try checked(result)
        } catch where name != nil && error.sqlState == "0A000" {
            forgetPrepared(sql, types: bound.types, name: name!)
            guard retryingStalePlan, isIdle else { throw Self.stale(error) }
            return try query(sql, bound, retryingStalePlan: false)
        }
    }

    /// `error` (a 0A000 from a prepared statement, which has just been dropped) as a stale statement.
    private static func stale(_ error: PostgresError) -> PostgresError {
        var stale = error
        stale.kind = .stalePreparedStatement
        return stale
    }

    /// Runs `statements` in order in one round trip (libpq's pipeline mode) and returns one result
    /// per statement.
    ///
    /// The statements are sent together, followed by one Sync, so the server answers them together:
    /// one network exchange and one wake-up on each side instead of one per statement. Outside an
    /// explicit transaction they form one implicit transaction. When a statement fails, the server
    /// skips the rest up to the Sync; the first error is thrown (inside `BEGIN`, the transaction is
    /// then failed and must be rolled back). Statements with parameters are prepared as in
    /// ``query(_:_:)``, before the pipeline is sent, so they cannot name a table that an earlier
    /// statement of the same pipeline creates. The connection stays in blocking mode, which is
    /// safe because the server's answers here are small: it never has to wait for us to read while
    /// we are still writing.
    public func pipeline(_ statements: [PostgresStatement]) throws(PostgresError) -> [PostgresResult] {
        if statements.count == 1 { return [try query(statements[0].sql, statements[0].parameters)] }
        var bound: [BoundParameters] = []
        for statement in statements { bound.append(try BoundParameters(statement.parameters)) }
        var names: [String?] = []
        for (statement, parameters) in zip(statements, bound) {
            names.append(parameters.count > 0 ? try preparedName(statement.sql, types: parameters.types) : nil)
        }
        guard PQenterPipelineMode(handle) == 1 else { throw lostOrFailed() }
        for index in statements.indices {
            let parameters = bound[index]
            let sent = parameters.withValues { values in
                if let name = names[index] {
                    return PQsendQueryPrepared(handle, name, Int32(parameters.count), values, parameters.lengths, parameters.formats, 1)
                }
                return PQsendQueryParams(handle, statements[index].sql, Int32(parameters.count), parameters.types, values,
                                         parameters.lengths, parameters.formats, 1)
            }
            // A failed send leaves the pipeline half written: this connection cannot be trusted again.
            guard sent == 1 else { throw abandonPipeline(after: nil) }
        }
        guard PQpipelineSync(handle) == 1 else { throw abandonPipeline(after: nil) }

        var results: [PostgresResult] = []
        var firstError: PostgresError?
        for index in statements.indices {
            // Each statement's answer is one result followed by a null.
            guard let result = PQgetResult(handle) else { throw abandonPipeline(after: firstError) }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                results.append(PostgresResult(owning: result))
            case PGRES_PIPELINE_ABORTED:  // skipped after an earlier failure
                PQclear(result)
            default:
                var error = PostgresError.from(result: result, connection: handle)
                PQclear(result)
                if let name = names[index], error.sqlState == "0A000" {
                    forgetPrepared(statements[index].sql, types: bound[index].types, name: name)
                    error = Self.stale(error)
                }
                if firstError == nil { firstError = error }
            }
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        guard let sync = PQgetResult(handle) else { throw abandonPipeline(after: firstError) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQexitPipelineMode(handle) == 1 else { throw abandonPipeline(after: firstError) }
        if let firstError {
            markBrokenIfNeeded()
            throw firstError
        }
        return results
    }

    /// Marks the connection broken (it may be left mid-pipeline) and returns the error to throw:
    /// the statement error already seen, else libpq's own.
    private func abandonPipeline(after firstError: PostgresError?) -> PostgresError {
        isBroken = true
        return firstError ?? PostgresError.from(result: nil, connection: handle)
    }

    /// libpq's current error, marking the connection broken when it is.
    private func lostOrFailed() -> PostgresError {
        let error = PostgresError.from(result: nil, connection: handle)
        markBrokenIfNeeded()
        return error
    }

    /// Drops a prepared statement whose result type changed under it ("cached plan must not change
    /// result type" after a migration); the next call prepares it again.
    private func forgetPrepared(_ sql: String, types: [Oid], name: String) {
        prepared[PreparedStatementKey(sql: sql, types: types)] = nil
        _ = try? checked(PQexec(handle, "DEALLOCATE \(name)"))
    }

    /// The name of `sql` prepared with `types` on this connection, preparing it first if needed;
    /// `nil` when the per-connection limit is reached (the caller then runs it unprepared).
    private func preparedName(_ sql: String, types: [Oid]) throws(PostgresError) -> String? {
        let key = PreparedStatementKey(sql: sql, types: types)
        if let name = prepared[key] { return name }
        guard prepared.count < Self.preparedStatementLimit else { return nil }
        preparedCount += 1
        let name = "countersign_\(preparedCount)"
        _ = try checked(PQprepare(handle, name, sql, Int32(types.count), types))
        prepared[key] = name
        return name
    }

    /// Waits up to `timeout` for `NOTIFY`s on the channels this connection listens to (`LISTEN`
    /// them first) and returns those that arrived, oldest first; empty when none came in time.
    /// A closed or failed connection throws (and is marked broken).
    public func notifications(waitingAtMost timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
        var received = takeNotifications()
        if !received.isEmpty { return received }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw lostOrFailed() }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw PostgresError(.connectionLost, message: "poll failed: errno \(errno)") }
        if ready > 0 {
            guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                isBroken = true
                throw PostgresError.from(result: nil, connection: handle)
            }
            received = takeNotifications()
        }
        return received
    }

    private func takeNotifications() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notice = PQnotifies(handle) {
            received.append(PostgresNotification(channel: String(cString: notice.pointee.relname),
                                                 payload: notice.pointee.extra.map { String(cString: $0) } ?? ""))
            PQfreemem(notice)
        }
        return received
    }

    /// Runs a trusted SQL script that may hold several statements (simple query protocol, no
    /// parameters). Only for SQL shipped with the service, such as migrations — never user input.
    public func executeScript(_ sql: String) throws(PostgresError) {
        _ = try checked(PQexec(handle, sql))
    }

    private func checked(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        guard let result else {
            let error = PostgresError.from(result: nil, connection: handle)
            markBrokenIfNeeded()
            throw error
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(owning: result)
        default:
            let error = PostgresError.from(result: result, connection: handle)
            PQclear(result)
            markBrokenIfNeeded()
            throw error
        }
    }

    private func markBrokenIfNeeded() {
        if PQstatus(handle) != CONNECTION_OK { isBroken = true }
    }
}
