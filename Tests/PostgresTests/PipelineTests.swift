import Foundation
@testable import Postgres
import Testing

/// Several statements in one round trip: libpq's pipeline mode on a connection, and the queue a
/// session sends with its next statement (which is how `withTransaction` sends `BEGIN` and how the
/// audit insert rides with `COMMIT`).
@Suite("Pipelined statements", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PipelineTests {
    private func count(_ table: String, _ client: PostgresClient) async throws -> Int {
        try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int.self, row: 0, column: 0)
    }

    @Test("a pipeline answers every statement in order, each seeing the ones before it")
    func resultsInOrder() throws {
        let connection = try TestDatabase.connect()
        let table = TestDatabase.uniqueTable("p_order")
        _ = try connection.query("CREATE TEMP TABLE \(table) (n int8, label text)")
        let results = try connection.pipeline([
            PostgresStatement("DELETE FROM \(unescaped: table)"),
            PostgresStatement("INSERT INTO \(table) VALUES ($1, $2), ($3, $4)", [1, "one", 2, "two"]),
            PostgresStatement("SELECT label FROM \(table) WHERE n = $1", [2]),
            PostgresStatement("SELECT count(*), sum(n)::int8 FROM \(unescaped: table)"),
        ])
        #expect(results.count == 4)
        #expect(results[1].affectedRows == 2)
        #expect(try results[2].decode(String.self, row: 0, column: 0) == "two")
        #expect(try results[3].decode(Int.self, row: 0, column: 0) == 2)
        #expect(try results[3].decode(Int.self, row: 0, column: 1) == 3)
        // The connection is out of pipeline mode: plain calls work, and the parameterised
        // statements were prepared like any other.
        #expect(try connection.query("SELECT $1::int8 * 2", [21]).decode(Int.self, row: 0, column: 0) == 42)
        let prepared = try connection.query("SELECT count(*) FROM pg_prepared_statements").decode(Int.self, row: 0, column: 0)
        #expect(prepared == 3)
    }

    @Test("a failing statement throws the server's error, and the statements after it do not run")
    func failureSkipsTheRest() throws {
        let connection = try TestDatabase.connect()
        let table = TestDatabase.uniqueTable("p_fail")
        _ = try connection.query("CREATE TEMP TABLE \(table) (n int8 PRIMARY KEY)")
        do {
            _ = try connection.pipeline([
                PostgresStatement("INSERT INTO \(table) VALUES ($1)", [1]),
                PostgresStatement("INSERT INTO \(table) VALUES ($1)", [1]),
                PostgresStatement("INSERT INTO \(table) VALUES ($1)", [2]),
            ])
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.kind == .uniqueViolation)
            #expect(error.message.contains("duplicate key"), "\(error.message)")
        }
        // Outside BEGIN the pipeline was one implicit transaction: the first insert is gone too.
        #expect(try connection.query("SELECT count(*) FROM \(table)").decode(Int.self, row: 0, column: 0) == 0)
        #expect(connection.isBroken == false)
        #expect(connection.isIdle)
        let results = try connection.pipeline([
            PostgresStatement("INSERT INTO \(table) VALUES ($1)", [3]),
            PostgresStatement("SELECT count(*) FROM \(unescaped: table)"),
        ])
        #expect(try results[1].decode(Int.self, row: 0, column: 0) == 1)
    }

    @Test("a connection lost in the middle of a pipeline is a lost connection, and is not reused")
    func lostMidPipeline() throws {
        let connection = try TestDatabase.connect()
        do {
            _ = try connection.pipeline([
                PostgresStatement("SELECT pg_terminate_backend(pg_backend_pid())"),
                PostgresStatement("SELECT $1::int8", [1]),
            ])
            Issue.record("a pipeline on a terminated backend succeeded")
        } catch {
            #expect(error.kind == .connectionLost || error.kind == .serverUnavailable, "\(error)")
        }
        #expect(connection.isBroken)
        #expect(connection.isUsable == false)
    }

    @Test("a queued statement goes with the next one, and its error is thrown there")
    func queuedStatementError() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("p_queue")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8 CHECK (n > 0))")
            try await client.withConnection { session in
                session.enqueue("INSERT INTO \(table) VALUES ($1)", [5])
                // Not sent yet: another connection would not see it, and this one sends it now.
                let seen = try await session.query("SELECT count(*) FROM \(unescaped: table)").decode(Int.self, row: 0, column: 0)
                #expect(seen == 1)
                session.enqueue("INSERT INTO \(table) VALUES ($1)", [-1])
                do {
                    try await session.execute("SELECT 1")
                    Issue.record("the queued statement's check violation was not reported")
                } catch let error as PostgresError {
                    #expect(error.kind == .checkViolation)
                }
            }
            #expect(try await count(table, client) == 1)
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test("a queued statement's check sees its result, and what it throws is thrown by the sending call")
    func queuedCheck() async throws {
        struct Unexpected: Error, Equatable { var count: Int }
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("p_check")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8)")
            await #expect(throws: Unexpected(count: 2)) {
                try await client.withTransaction { session in
                    session.enqueue("WITH i AS (INSERT INTO \(unescaped: table) VALUES (1), (2) RETURNING 1) SELECT count(*) FROM i") { result in
                        let inserted = try result.decode(Int.self, row: 0, column: 0)
                        if inserted != 1 { throw Unexpected(count: inserted) }
                    }
                    try await session.execute("SELECT 1")
                }
            }
            #expect(try await count(table, client) == 0, "the transaction was rolled back")
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test("a statement queued last in a transaction goes with COMMIT; if it fails, nothing is committed and the connection is kept")
    func queuedBeforeCommit() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("p_commit")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8 PRIMARY KEY)")
            let pid = try await client.query("SELECT pg_backend_pid()").decode(Int32.self, row: 0, column: 0)
            try await client.withTransaction { session in
                try await session.execute("INSERT INTO \(table) VALUES ($1)", [1])
                session.enqueue("INSERT INTO \(table) VALUES ($1)", [2])
            }
            #expect(try await count(table, client) == 2)
            await #expect(throws: PostgresError.self) {
                try await client.withTransaction { session in
                    try await session.execute("INSERT INTO \(table) VALUES ($1)", [3])
                    session.enqueue("INSERT INTO \(table) VALUES ($1)", [1])  // duplicate: fails in the COMMIT's round trip
                }
            }
            #expect(try await count(table, client) == 2, "row 3 was rolled back with the failed insert")
            let after = try await client.query("SELECT pg_backend_pid()").decode(Int32.self, row: 0, column: 0)
            #expect(after == pid, "the transaction was rolled back, so the connection went back to the pool")
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test("statements queued when a lease ends are sent; when the body throws they are dropped")
    func queuedAtEndOfLease() async throws {
        struct Abort: Error {}
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("p_lease")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8)")
            try await client.withConnection { session in
                session.enqueue("INSERT INTO \(table) VALUES ($1)", [1])
                session.enqueue("INSERT INTO \(table) VALUES ($1)", [2])
            }
            #expect(try await count(table, client) == 2)
            await #expect(throws: Abort.self) {
                try await client.withConnection { session in
                    session.enqueue("INSERT INTO \(table) VALUES ($1)", [3])
                    throw Abort()
                }
            }
            #expect(try await count(table, client) == 2)
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }
}
