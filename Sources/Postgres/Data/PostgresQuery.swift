/// A statement written as SQL with its values interpolated:
///
/// ```swift
/// let query: PostgresQuery = "SELECT id FROM deliveries WHERE reference = \(reference)::text"
/// ```
///
/// Each interpolated value (any ``PostgresBindable``, optionals included: `nil` is SQL NULL)
/// becomes the next placeholder `$1`, `$2`, … and is bound, never spliced into the text, so the text
/// of one call site is the same on every run and the connection's prepared statement for it is
/// reused. Only constant SQL fragments go in as text, and only when asked for by name:
/// `\(unescaped: DeliveryRepository.proofJoin)`. A query may also take another query, its values
/// renumbered after the ones before it: `\(filter.whereClause)`.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation {
    /// The text before, between and after the placeholders: always one more than ``binds``.
    private var pieces: [String]
    /// The values of `$1`, `$2`, … in order.
    public private(set) var binds: [any PostgresBindable]

    /// A query with no values.
    public init(stringLiteral sql: String) {
        pieces = [sql]
        binds = []
    }

    /// A query from an interpolated literal.
    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.query
    }

    /// A query of constant text with no values (for text built from constants only).
    public init(unescaped sql: String) {
        self.init(stringLiteral: sql)
    }

    /// The SQL text, with `$1`, `$2`, … where the values go.
    public var sql: String {
        var sql = pieces[0]
        for index in binds.indices {
            sql += "$\(index + 1)"
            sql += pieces[index + 1]
        }
        return sql
    }

    /// Appends `other`; its values follow this query's, its placeholders renumbered accordingly.
    public mutating func append(_ other: PostgresQuery) {
        pieces[pieces.count - 1] += other.pieces[0]
        pieces += other.pieces.dropFirst()
        binds += other.binds
    }

    /// Appends constant SQL text.
    public mutating func append(unescaped sql: String) {
        pieces[pieces.count - 1] += sql
    }

    /// Appends `value` as the next placeholder.
    public mutating func append(bind value: some PostgresBindable) {
        binds.append(value)
        pieces.append("")
    }

    /// The interpolation that builds a ``PostgresQuery``.
    public struct StringInterpolation: StringInterpolationProtocol {
        var query: PostgresQuery = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            query.pieces.reserveCapacity(interpolationCount + 1)
            query.binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            query.append(unescaped: literal)
        }

        /// Binds `value` as the next placeholder.
        public mutating func appendInterpolation(_ value: some PostgresBindable) {
            query.append(bind: value)
        }

        /// Binds `value` as the next placeholder, SQL NULL when it is `nil`.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            query.append(bind: value)
        }

        /// Splices constant SQL text (a column list, a join condition): never a value from outside.
        public mutating func appendInterpolation(unescaped sql: String) {
            query.append(unescaped: sql)
        }

        /// Splices another query, binding its values after the ones before it.
        public mutating func appendInterpolation(_ other: PostgresQuery) {
            query.append(other)
        }
    }
}

extension Sequence where Element == PostgresQuery {
    /// The queries one after another with `separator` (constant SQL) between them, values in order.
    public func joined(separator: String) -> PostgresQuery {
        var joined: PostgresQuery = ""
        for (index, query) in enumerated() {
            if index > 0 { joined.append(unescaped: separator) }
            joined.append(query)
        }
        return joined
    }
}

extension PostgresStatement {
    /// The statement `query` stands for.
    public init(_ query: PostgresQuery) {
        self.init(query.sql, query.binds)
    }
}
