import Foundation
import Postgres
import Testing

/// Stops and starts the shared test server, so `make test` runs this suite in a pass of its own.
@Suite("Database outage", .serialized,
       .enabled(if: TestDatabase.isConfigured && TestDatabase.control != nil, "needs `make test` (TEST_DATABASE_URL and COUNTERSIGN_PGCTL)"))
struct DatabaseOutageTests {
    @Test func theClientSurvivesAServerRestart() async throws {
        try await TestDatabase.withClient(poolSize: 4) { client in
            let table = "t_outage_\(UInt32.random(in: 0...UInt32.max))"
            try await client.query("CREATE TABLE \(unescaped: table) (n int8)")
            // Fill the pool with idle connections that the restart will kill.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<4 { group.addTask { try await client.query("INSERT INTO \(table) SELECT $1 FROM pg_sleep(0.05)", [n]) } }
                try await group.waitForAll()
            }
            #expect(await client.statistics.idle == 4)

            try TestDatabase.runControl("restart")

            // Every following query succeeds without restarting the process.
            for n in 4..<10 {
                try await client.query("INSERT INTO \(table) VALUES ($1)", [n])
            }
            let count = try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int.self, row: 0, column: 0)
            #expect(count == 10)
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test func queriesFailWithATransientErrorWhileTheServerIsDownAndRecoverAfter() async throws {
        try await TestDatabase.withClient(poolSize: 2, acquireTimeout: .seconds(2)) { client in
            #expect(await client.isReachable())
            try TestDatabase.runControl("stop")
            do {
                try await client.query("SELECT 1")
                Issue.record("a query succeeded while the server was stopped")
            } catch let error as PostgresError {
                #expect(error.isTransient)
            }
            #expect(await client.isReachable(timeout: .seconds(2)) == false)
            try TestDatabase.runControl("start")
            #expect(await client.isReachable(timeout: .seconds(30)))  // a hang guard for a busy machine
        }
    }
}
