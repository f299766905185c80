import Foundation
import Postgres
import Testing
import TestSupport

@Suite("PostgreSQL client and pool", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PostgresClientTests {
    @Test func transactionCommitsWhenTheBodyReturns() async throws {
        try await TestDatabase.withClient { client in
            let table = TestDatabase.uniqueTable("t_commit")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8)")
            try await client.withTransaction { tx in
                try await tx.execute("INSERT INTO \(table) VALUES ($1)", [1])
                try await tx.execute("INSERT INTO \(table) VALUES ($1)", [2])
            }
            let count = try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int.self, row: 0, column: 0)
            #expect(count == 2)
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test func transactionRollsBackWhenTheBodyThrows() async throws {
        struct Abort: Error {}
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("t_rollback")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8)")
            await #expect(throws: Abort.self) {
                try await client.withTransaction { tx in
                    try await tx.execute("INSERT INTO \(unescaped: table) VALUES (1)")
                    throw Abort()
                }
            }
            // A failed statement also rolls back everything before it.
            await #expect(throws: PostgresError.self) {
                try await client.withTransaction { tx in
                    try await tx.execute("INSERT INTO \(unescaped: table) VALUES (2)")
                    try await tx.execute("INSERT INTO \(unescaped: table) VALUES ('not a number')")
                }
            }
            let count = try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int.self, row: 0, column: 0)
            #expect(count == 0)
            // The single pooled connection is usable again (not left inside a transaction).
            let status = try await client.query("SELECT 41 + 1").decode(Int.self, row: 0, column: 0)
            #expect(status == 42)
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test func uniqueViolationIsATypedError() async throws {
        try await TestDatabase.withClient { client in
            let table = TestDatabase.uniqueTable("t_unique")
            try await client.query("CREATE TABLE \(unescaped: table) (ref text CONSTRAINT \(unescaped: table)_ref_key UNIQUE)")
            try await client.query("INSERT INTO \(table) VALUES ($1)", ["PKG-1"])
            do {
                try await client.query("INSERT INTO \(table) VALUES ($1)", ["PKG-1"])
                Issue.record("a duplicate insert succeeded")
            } catch let error as PostgresError {
                #expect(error.kind == .uniqueViolation)
                #expect(error.sqlState == "23505")
                #expect(error.constraint == "\(table)_ref_key")
                #expect(error.message.contains("duplicate key"))
            }
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test func syntaxErrorCarriesTheServerMessage() async throws {
        try await TestDatabase.withClient { client in
            do {
                try await client.query("SELEC 1")
                Issue.record("bad SQL succeeded")
            } catch let error as PostgresError {
                #expect(error.kind == .queryFailed)
                #expect(error.sqlState == "42601")
                #expect(error.message.contains("syntax error"))
            }
        }
    }

    @Test func twoHundredConcurrentQueriesOverAPoolOfFour() async throws {
        try await TestDatabase.withClient(poolSize: 4, acquireTimeout: .seconds(30)) { client in
            let results = try await withThrowingTaskGroup(of: (Int, Int, Int32).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await client.withConnection { session in
                            let result = try await session.query("SELECT $1::int8 * 2, pg_sleep(0.002)::text", [index])
                            return (index, try result.decode(Int.self, row: 0, column: 0), session.backendPID)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0.1 == $0.0 * 2 })
            #expect(Set(results.map(\.2)).count <= 4)
            let statistics = await client.statistics
            #expect(statistics.open <= 4)
            #expect(statistics.waiting == 0)
        }
    }

    @Test func acquireTimesOutWhenThePoolIsExhausted() async throws {
        try await TestDatabase.withClient(poolSize: 1, acquireTimeout: .milliseconds(200)) { client in
            try await client.withConnection { _ in
                do {
                    try await client.query("SELECT 1")
                    Issue.record("a second lease was granted from a pool of one")
                } catch let error as PostgresError {
                    #expect(error.kind == .poolTimeout)
                }
            }
            #expect(try await client.query("SELECT 1").rowCount == 1)
        }
    }

    @Test func aTerminatedConnectionIsReplaced() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let firstPID = try await client.query("SELECT pg_backend_pid()").decode(Int32.self, row: 0, column: 0)
            // Kill our pooled backend from another connection, as a DBA or a failover would.
            let killer = TestDatabase.client(poolSize: 1)
            try await killer.query("SELECT pg_terminate_backend($1::int4)", [Int(firstPID)])
            await killer.shutdown()
            try await Task.sleep(for: .milliseconds(100))
            let secondPID = try await client.query("SELECT pg_backend_pid()").decode(Int32.self, row: 0, column: 0)
            #expect(secondPID != firstPID)
        }
    }

    @Test func connectsOverAUnixSocket() async throws {
        let tcp = try #require(URLComponents(string: TestDatabase.url!))
        let socketDirectory = try #require(ProcessInfo.processInfo.environment["TEST_DATABASE_SOCKET_DIR"])
        let encodedHost = socketDirectory.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = "postgres://\(tcp.user!)@\(encodedHost):\(tcp.port!)\(tcp.path)"
        let client = PostgresClient(configuration: .forTests(url: url, poolSize: 1))
        let address = try await client.query("SELECT coalesce(inet_client_addr()::text, 'unix')").decode(String.self, row: 0, column: 0)
        await client.shutdown()
        #expect(address == "unix")
    }

    @Test func aFailedConnectIsATypedErrorWithLibpqsMessage() async throws {
        let client = PostgresClient(configuration: PostgresConfiguration(url: "postgres://nobody@127.0.0.1:1/none", poolSize: 1))
        do {
            try await client.query("SELECT 1")
            Issue.record("connected to port 1")
        } catch let error as PostgresError {
            #expect(error.kind == .connectionFailed)
            #expect(error.message.contains("127.0.0.1"))
        }
        // The failed attempt released its slot: a second attempt fails the same way instead of timing out.
        await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
        #expect(await client.statistics.open == 0)
        #expect(await client.isReachable(timeout: .seconds(2)) == false)
        await client.shutdown()
    }

    @Test func aURLWithoutThePostgresSchemeIsRejected() {
        #expect(throws: PostgresError.self) { try PostgresConnection(url: "mysql://localhost/db") }
    }
}
