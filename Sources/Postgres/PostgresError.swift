import CLibPQ

/// A failure reported by PostgreSQL, libpq or the connection pool.
///
/// Every error from libpq is turned into one of these, carrying the server's (or libpq's)
/// message and, when the server sent one, its SQLSTATE code.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; derived from the SQLSTATE where there is one.
    public enum Kind: String, Sendable, Equatable {
        /// The URL could not be understood.
        case invalidConfiguration
        /// A new connection could not be established.
        case connectionFailed
        /// An established connection broke (server restart, network failure).
        case connectionLost
        /// SQLSTATE 23505.
        case uniqueViolation
        /// SQLSTATE 23503.
        case foreignKeyViolation
        /// SQLSTATE 23502.
        case notNullViolation
        /// SQLSTATE 23514.
        case checkViolation
        /// SQLSTATE 40001.
        case serializationFailure
        /// SQLSTATE 40P01.
        case deadlockDetected
        /// SQLSTATE 57014 (statement timeout or cancel).
        case queryCanceled
        /// SQLSTATE class 57 other than 57014 (e.g. the server is shutting down).
        case serverUnavailable
        /// A statement prepared on this connection no longer fits the schema: a migration changed a
        /// table under it (SQLSTATE 0A000, "cached plan must not change result type"). The
        /// connection has dropped the statement, so the same work run again prepares it afresh.
        case stalePreparedStatement
        /// Any other error the server reported for a statement.
        case queryFailed
        /// A value could not be decoded into the requested Swift type.
        case decodingFailed
        /// A value cannot be bound as given (a text value with a NUL byte); nothing was sent.
        case invalidParameter
        /// No connection became free within the acquire timeout.
        case poolTimeout
        /// The pool is shut down.
        case poolClosed
    }

    /// The kind of failure.
    public var kind: Kind
    /// Five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    /// The primary message (from the server or libpq), without trailing newlines.
    public var message: String
    /// The server's DETAIL field, if any.
    public var detail: String?
    /// The constraint involved, for integrity violations.
    public var constraint: String?

    /// Creates an error.
    public init(_ kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil, constraint: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.constraint = constraint
    }

    /// True when retrying on a fresh connection may succeed (the database went away or is restarting).
    public var isTransient: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .serverUnavailable, .poolTimeout: return true
        default: return false
        }
    }

    public var description: String {
        var text = "PostgreSQL \(kind.rawValue)"
        if let sqlState { text += " [\(sqlState)]" }
        text += ": \(message)"
        if let detail { text += " (\(detail))" }
        return text
    }

    /// Maps a SQLSTATE to a kind.
    static func kind(forSQLState state: String) -> Kind {
        switch state {
        case "23505": return .uniqueViolation
        case "23503": return .foreignKeyViolation
        case "23502": return .notNullViolation
        case "23514": return .checkViolation
        case "40001": return .serializationFailure
        case "40P01": return .deadlockDetected
        case "57014": return .queryCanceled
        default:
            if state.hasPrefix("08") { return .connectionLost }
            if state.hasPrefix("57") { return .serverUnavailable }
            return .queryFailed
        }
    }

    /// Builds an error from a failed result, or from the connection when libpq gave no result.
    static func from(result: OpaquePointer?, connection: OpaquePointer) -> PostgresError {
        guard let result else {
            let message = lastMessage(of: connection)
            return PostgresError(isLost(connection) || isFatal(message) ? .connectionLost : .queryFailed, message: message)
        }
        func field(_ code: Int32) -> String? {
            guard let pointer = PQresultErrorField(result, code) else { return nil }
            return String(cString: pointer)
        }
        let state = field(Int32(UInt8(ascii: "C")))  // PG_DIAG_SQLSTATE
        var message = field(Int32(UInt8(ascii: "M"))) ?? trimmed(String(cString: PQresultErrorMessage(result)))
        if message.isEmpty { message = lastMessage(of: connection) }
        // A server error carries a SQLSTATE; libpq's own (no SQLSTATE) may mean the connection
        // died, which only a probe can tell.
        let lost = state == nil ? isLost(connection) || isFatal(message) : PQstatus(connection) != CONNECTION_OK
        let kind = lost ? .connectionLost : state.map(kind(forSQLState:)) ?? .queryFailed
        return PostgresError(kind, message: message, sqlState: state,
                             detail: field(Int32(UInt8(ascii: "D"))),
                             constraint: field(Int32(UInt8(ascii: "n"))))
    }

    /// True when the connection is gone. libpq can report a failed write ("server closed the
    /// connection unexpectedly") while its status is still `CONNECTION_OK`: after a write fails it
    /// keeps reading to collect the server's last words, and when those are a notice (as an
    /// immediate shutdown sends) it returns the write error before it has read the end of the
    /// stream. One non-blocking read (`PQconsumeInput`; libpq's socket is always non-blocking)
    /// then finds the end and marks the connection bad. A healthy connection is left as it was.
    static func isLost(_ connection: OpaquePointer) -> Bool {
        if PQstatus(connection) != CONNECTION_OK { return true }
        return PQconsumeInput(connection) == 0 || PQstatus(connection) != CONNECTION_OK
    }

    /// True for a message the server sends as it ends the session ("FATAL: terminating connection
    /// due to administrator command" during a fast shutdown): libpq may hand it over as the query's
    /// error, without a SQLSTATE, before it has seen the connection close. A FATAL error always ends
    /// the session, so the connection is lost whatever its status says yet.
    static func isFatal(_ message: String) -> Bool {
        message.hasPrefix("FATAL:") || message.contains("\nFATAL:")
    }

    static func lastMessage(of connection: OpaquePointer) -> String {
        trimmed(String(cString: PQerrorMessage(connection)))
    }

    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
