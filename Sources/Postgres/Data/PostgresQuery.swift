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
    /// The SQL text as UTF-8, built once as the query is written (a statement on the upload path
    /// costs no second pass), with `$1`, `$2`, … where the values go.
    @usableFromInline var text: [UInt8]
    /// The values of `$1`, `$2`, … in order.
    public private(set) var binds: [any PostgresBindable]
    /// Where in ``text`` each placeholder starts, so that a query appended to another can be renumbered.
    @usableFromInline var placeholderOffsets: [Int]

    /// A query with no values.
    public init(stringLiteral sql: String) {
        text = Array(sql.utf8)
        binds = []
        placeholderOffsets = []
    }

    /// A query from an interpolated literal.
    @inlinable
    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.query
    }

    /// A query of constant text with no values (for text built from constants only).
    public init(unescaped sql: String) {
        self.init(stringLiteral: sql)
    }

    /// An empty query with room for `textCapacity` bytes of SQL and `bindCapacity` values.
    @usableFromInline
    init(reservingText textCapacity: Int, binds bindCapacity: Int) {
        text = []
        text.reserveCapacity(textCapacity)
        binds = []
        binds.reserveCapacity(bindCapacity)
        placeholderOffsets = []
        placeholderOffsets.reserveCapacity(bindCapacity)
    }

    /// The SQL text, with `$1`, `$2`, … where the values go.
    public var sql: String {
        String(decoding: text, as: UTF8.self)
    }

    /// Appends constant SQL text.
    @inlinable
    public mutating func append(unescaped sql: String) {
        text.append(contentsOf: sql.utf8)
    }

    /// Appends `value` as the next placeholder.
    @inlinable
    public mutating func append(bind value: some PostgresBindable) {
        appendBind(value)
    }

    /// Binds `value` (already an existential: the generic entry points specialise down to here).
    @usableFromInline
    mutating func appendBind(_ value: any PostgresBindable) {
        binds.append(value)
        placeholderOffsets.append(text.count)
        text.append(UInt8(ascii: "$"))
        let number = binds.count
        var divisor = 1
        while divisor * 10 <= number { divisor *= 10 }
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
            divisor /= 10
        }
    }

    /// Appends `other`; its values follow this query's, its placeholders renumbered accordingly.
    public mutating func append(_ other: PostgresQuery) {
        var copied = 0
        for (index, offset) in other.placeholderOffsets.enumerated() {
            text += other.text[copied..<offset]
            appendBind(other.binds[index])
            // Skip the other query's own placeholder: `$` and the digits of its number.
            copied = offset + 1
            while copied < other.text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(other.text[copied]) { copied += 1 }
        }
        text += other.text[copied...]
    }

    /// The interpolation that builds a ``PostgresQuery``.
    public struct StringInterpolation: StringInterpolationProtocol {
        @usableFromInline var query: PostgresQuery

        @inlinable
        public init(literalCapacity: Int, interpolationCount: Int) {
            query = PostgresQuery(reservingText: literalCapacity + 3 * interpolationCount, binds: interpolationCount)
        }

        @inlinable
        public mutating func appendLiteral(_ literal: String) {
            query.append(unescaped: literal)
        }

        /// Binds `value` as the next placeholder.
        @inlinable
        public mutating func appendInterpolation(_ value: some PostgresBindable) {
            query.appendBind(value)
        }

        /// Binds `value` as the next placeholder, SQL NULL when it is `nil`.
        @inlinable
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            query.appendBind(value)
        }

        /// Splices constant SQL text (a column list, a join condition): never a value from outside.
        @inlinable
        public mutating func appendInterpolation(unescaped sql: String) {
            query.append(unescaped: sql)
        }

        /// Splices another query, binding its values after the ones before it.
        @inlinable
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
