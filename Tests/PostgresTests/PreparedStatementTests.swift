import Foundation
import Postgres
import Testing

@Suite("Prepared statements", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PreparedStatementTests {
    static func preparedCount(_ connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) FROM pg_prepared_statements").decode(Int.self, row: 0, column: 0)
    }

    @Test("a parameterised statement is prepared once per connection and per parameter types")
    func preparedOnce() throws {
        let connection = try PostgresConnection(url: TestDatabase.url!)
        #expect(try Self.preparedCount(connection) == 0)
        for value in 1...5 {
            #expect(try connection.query("SELECT $1::int8 + 1", [value]).decode(Int.self, row: 0, column: 0) == value + 1)
        }
        #expect(try Self.preparedCount(connection) == 1, "five runs, one preparation")
        // The same text with a NULL where a value was is prepared separately, and both still answer correctly.
        #expect(try connection.query("SELECT $1::int8 IS NULL", [Int?.none]).decode(Bool.self, row: 0, column: 0))
        #expect(try connection.query("SELECT $1::int8 IS NULL", [7]).decode(Bool.self, row: 0, column: 0) == false)
        #expect(try Self.preparedCount(connection) == 3)
        // Statements without parameters are never prepared.
        _ = try connection.query("SELECT 1")
        #expect(try Self.preparedCount(connection) == 3)
    }

    @Test("past the per-connection limit statements still run, unprepared")
    func limit() throws {
        let connection = try PostgresConnection(url: TestDatabase.url!)
        let limit = PostgresConnection.preparedStatementLimit
        for index in 0..<(limit + 10) {
            let sql = "SELECT $1::int8 + \(index)"
            #expect(try connection.query(sql, [1]).decode(Int.self, row: 0, column: 0) == 1 + index)
        }
        #expect(try Self.preparedCount(connection) == limit)
    }

    @Test("a table changed under a prepared statement fails that call once, then works again")
    func schemaChange() throws {
        let connection = try PostgresConnection(url: TestDatabase.url!)
        let table = "t_prepared_\(UInt32.random(in: 0...UInt32.max))"
        _ = try connection.query("CREATE TABLE \(table) (id int8, name text)")
        defer { _ = try? connection.query("DROP TABLE \(table)") }
        _ = try connection.query("INSERT INTO \(table) VALUES (1, 'a')")
        let select = "SELECT * FROM \(table) WHERE id = $1"
        #expect(try connection.query(select, [1]).rows.count == 1)
        _ = try connection.query("ALTER TABLE \(table) ADD COLUMN extra int8")
        do {
            _ = try connection.query(select, [1])  // PostgreSQL refuses a prepared plan whose result shape changed
        } catch {
            #expect(error.sqlState == "0A000")
        }
        let again = try connection.query(select, [1])
        #expect(again.rows.count == 1)
        #expect(again.columnCount == 3, "re-prepared with the new column")
    }
}
