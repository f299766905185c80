import CLibPQ

/// The rows of a completed statement. Owns its `PGresult` and frees it exactly once.
///
/// A `PGresult` is immutable once libpq returns it and holds no reference to its connection,
/// so a result may be read from any thread after the connection has been returned to the pool.
/// Columns are delivered in binary format.
public final class PostgresResult: @unchecked Sendable {
    private let handle: OpaquePointer

    init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// Number of rows returned.
    public var rowCount: Int { Int(PQntuples(handle)) }

    /// Number of columns per row.
    public var columnCount: Int { Int(PQnfields(handle)) }

    /// Rows affected by an INSERT/UPDATE/DELETE (0 when not applicable).
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The name of column `index`.
    public func columnName(_ index: Int) -> String {
        String(cString: PQfname(handle, Int32(index)))
    }

    /// The index of the column called `name`, if present.
    public func columnIndex(_ name: String) -> Int? {
        let index = Int(PQfnumber(handle, name))
        return index >= 0 ? index : nil
    }

    /// The type OID of column `index`.
    public func columnType(_ index: Int) -> UInt32 {
        UInt32(PQftype(handle, Int32(index)))
    }

    /// True if the value at (`row`, `column`) is SQL NULL.
    public func isNull(row: Int, column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// Decodes the value at (`row`, `column`) as `T`.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, row: Int, column: Int) throws(PostgresError) -> T {
        guard row >= 0, row < rowCount, column >= 0, column < columnCount else {
            throw PostgresError(.decodingFailed, message: "no value at row \(row), column \(column)")
        }
        let oid = columnType(column)
        if isNull(row: row, column: column) { return try T.decodeNull(type: oid) }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        let pointer = UnsafeRawPointer(PQgetvalue(handle, Int32(row), Int32(column))!)
        do {
            return try T.decode(from: UnsafeRawBufferPointer(start: pointer, count: length), type: oid)
        } catch {
            var error = error
            error.message = "column \"\(columnName(column))\": " + error.message
            throw error
        }
    }

    /// Decodes the value in the column called `name` at `row`.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, row: Int, column name: String) throws(PostgresError) -> T {
        guard let index = columnIndex(name) else {
            throw PostgresError(.decodingFailed, message: "no column named \"\(name)\"")
        }
        return try decode(type, row: row, column: index)
    }

    /// The rows, as lightweight views.
    public var rows: [PostgresRow] {
        (0..<rowCount).map { PostgresRow(result: self, index: $0) }
    }

    /// The first row, if any.
    public var first: PostgresRow? {
        rowCount > 0 ? PostgresRow(result: self, index: 0) : nil
    }
}
