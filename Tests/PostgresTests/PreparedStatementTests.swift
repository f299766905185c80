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
        let connection = try TestDatabase.connect()
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
        let connection = try TestDatabase.connect()
        let limit = PostgresConnection.preparedStatementLimit
        for index in 0..<(limit + 10) {
            let sql = "SELECT $1::int8 + \(index)"
            #expect(try connection.query(sql, [1]).decode(Int.self, row: 0, column: 0) == 1 + index)
        }
        #expect(try Self.preparedCount(connection) == limit)
    }

    @Test("a table changed under a prepared statement: re-prepared at once outside a transaction; inside one that call fails once")
    func schemaChange() throws {
        let connection = try TestDatabase.connect()
        let table = "t_prepared_\(UInt32.random(in: 0...UInt32.max))"
        _ = try connection.query("CREATE TABLE \(table) (id int8, name text)")
        defer { _ = try? connection.query("DROP TABLE \(table)") }
        _ = try connection.query("INSERT INTO \(table) VALUES (1, 'a')")
        let select = "SELECT * FROM \(table) WHERE id = $1"
        #expect(try connection.query(select, [1]).rows.count == 1)

        // Outside a transaction the failed attempt ran nothing: the call prepares again and answers.
        _ = try connection.query("ALTER TABLE \(table) ADD COLUMN extra int8")
        let reprepared = try connection.query(select, [1])
        #expect(reprepared.rows.count == 1 && reprepared.columnCount == 3, "re-prepared with the new column")

        // Inside a transaction the error aborts it, so it reaches the caller; the next call works.
        _ = try connection.query("ALTER TABLE \(table) ADD COLUMN more int8")
        _ = try connection.query("BEGIN")
        #expect { try connection.query(select, [1]) } throws: { ($0 as? PostgresError)?.kind == .stalePreparedStatement }
        _ = try connection.query("ROLLBACK")
        #expect(try connection.query(select, [1]).columnCount == 4)
    }

    @Test("a transaction whose prepared statements went stale under a migration runs again when asked to, else fails")
    func staleTransaction() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("t_stale")
            _ = try await client.query("CREATE TABLE \(unescaped: table) (id int8, name text)")
            _ = try await client.query("INSERT INTO \(unescaped: table) VALUES (1, 'a')")
            // Two statements of one transaction: the insert queued, the select sent with it (one pipeline).
            let insert = "INSERT INTO \(table) VALUES ($1, 'b') RETURNING *"
            let select = "SELECT * FROM \(table) WHERE id <= $1 ORDER BY id"
            var attempts = 0
            func work(_ session: PostgresSession, id: Int) async throws -> Int {
                attempts += 1
                session.enqueue(insert, [id])
                return try await session.query(select, [id]).rows.count
            }
            #expect(try await client.withTransaction(retryingStalePlans: true) { try await work($0, id: 2) } == 2)
            #expect(attempts == 1)

            // A migration on another connection changes the result type of both prepared statements.
            try await TestDatabase.withClient(poolSize: 1) { migrator in
                _ = try await migrator.query("ALTER TABLE \(unescaped: table) ADD COLUMN extra int8")
            }
            attempts = 0
            // Asked to: each failed attempt drops one stale statement and rolls back; the third commits once.
            #expect(try await client.withTransaction(retryingStalePlans: true) { try await work($0, id: 3) } == 3)
            #expect(attempts == 3, "one attempt per stale statement, then the one that commits")
            #expect(try await client.query("SELECT count(*) FROM \(unescaped: table) WHERE id = 3").decode(Int.self, row: 0, column: 0) == 1)

            // Not asked to (the default): the caller gets the typed error and nothing is written.
            try await TestDatabase.withClient(poolSize: 1) { migrator in
                _ = try await migrator.query("ALTER TABLE \(unescaped: table) ADD COLUMN more int8")
            }
            attempts = 0
            await #expect { try await client.withTransaction { try await work($0, id: 4) } } throws: {
                ($0 as? PostgresError)?.kind == .stalePreparedStatement
            }
            #expect(attempts == 1)
            #expect(try await client.query("SELECT count(*) FROM \(unescaped: table) WHERE id = 4").decode(Int.self, row: 0, column: 0) == 0)
            _ = try await client.query("DROP TABLE \(unescaped: table)")
        }
    }
}
