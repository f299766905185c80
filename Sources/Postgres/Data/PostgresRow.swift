/// One row of a `PostgresResult`.
public struct PostgresRow: Sendable {
    /// The result this row belongs to.
    public let result: PostgresResult
    /// Zero-based row index.
    public let index: Int

    /// Decodes column `column` (by position).
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, _ column: Int) throws(PostgresError) -> T {
        try result.decode(type, row: index, column: column)
    }

    /// Decodes the column called `name`.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, _ name: String) throws(PostgresError) -> T {
        try result.decode(type, row: index, column: name)
    }

    /// Decodes the column called `name` as the type the context asks for: `let id: UUID = try row.decode("id")`.
    public func decode<T: PostgresDecodable>(_ name: String) throws(PostgresError) -> T {
        try result.decode(T.self, row: index, column: name)
    }

    /// Decodes the whole row into a tuple, column by column:
    /// `let (id, name, at) = try row.decode((UUID, String, Date).self)`.
    ///
    /// The row must have exactly as many columns as the tuple has elements; otherwise (a statement
    /// changed without its reader) this throws ``PostgresError/Kind/decodingFailed``.
    public func decode<each Column: PostgresDecodable>(_ types: (repeat each Column).Type) throws(PostgresError)
        -> (repeat each Column) {
        var expected = 0
        for _ in repeat (each Column).self { expected += 1 }
        guard result.columnCount == expected else {
            throw PostgresError(.decodingFailed,
                                message: "the row has \(result.columnCount) columns, the tuple \(expected) elements")
        }
        var column = 0
        func next<Value: PostgresDecodable>(_ type: Value.Type) throws(PostgresError) -> Value {
            defer { column += 1 }
            return try result.decode(type, row: index, column: column)
        }
        return (repeat try next((each Column).self))
    }
}
