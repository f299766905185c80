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

    /// Runs one parameterised statement (`$1`, `$2`, ...); results come back in binary.
    ///
    /// A statement with parameters is prepared on this connection the first time it runs with
    /// those parameter types (PQprepare) and executed by name afterwards (PQexecPrepared), so the
    /// server parses and analyses it once per connection and may reuse its plan; measured on the
    /// upload path, parsing and planning were about 45 % of PostgreSQL's CPU time per request.
    /// Statements without parameters (transaction control, scripts) always run unprepared.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) throws(PostgresError) -> PostgresResult {
        let bound = parameters.map(\.postgresParameter)
        let count = bound.count
        var types = [Oid](repeating: 0, count: count)
        var lengths = [Int32](repeating: 0, count: count)
        var formats = [Int32](repeating: 0, count: count)
        // Parameter bytes live in one contiguous buffer; text values are NUL-terminated for libpq.
        var storage: [UInt8] = []
        var offsets = [Int?](repeating: nil, count: count)
        for (index, parameter) in bound.enumerated() {
            switch parameter {
            case .null:
                break
            case .text(let text, let oid):
                offsets[index] = storage.count
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                types[index] = Oid(oid)
            case .binary(let bytes, let oid):
                offsets[index] = storage.count
                storage.append(contentsOf: bytes)
                lengths[index] = Int32(bytes.count)
                formats[index] = 1
                types[index] = Oid(oid)
            }
        }
        if storage.isEmpty { storage.append(0) }  // keep a valid base address for zero-length values
        let name = count > 0 ? try preparedName(sql, types: types) : nil
        let result: OpaquePointer? = storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = offsets.map { $0.map { base + $0 } }
            if let name {
                return PQexecPrepared(handle, name, Int32(count), values, lengths, formats, 1)
            }
            return PQexecParams(handle, sql, Int32(count), types, values, lengths, formats, 1)
        }
        do {
            return try checked(result)
        } catch where name != nil && error.sqlState == "0A000" {
            // "cached plan must not change result type": a migration changed a table under a prepared
            // statement. Forget it; the next call prepares it again.
            prepared[PreparedStatementKey(sql: sql, types: types)] = nil
            _ = try? checked(PQexec(handle, "DEALLOCATE \(name!)"))
            throw error
        }
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

/// A statement as the server prepared it: its text and the parameter types it was prepared with
/// (a different type list, e.g. a NULL where a value was before, is a different statement).
struct PreparedStatementKey: Hashable {
    var sql: String
    var types: [Oid]
}
