import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import ProofAPI
import ProofService
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Stops and starts the shared test server, so `make test` runs this in the outage pass of its own.
@Suite("Readiness through a database outage (live server)", .serialized,
       .enabled(if: ScratchDatabase.isAvailable && ProcessInfo.processInfo.environment["COUNTERSIGN_PGCTL"] != nil,
                "needs `make test` (TEST_DATABASE_URL and COUNTERSIGN_PGCTL)"))
struct HealthDatabaseOutageTests {
    private static func control(_ command: String) throws {
        let script = ProcessInfo.processInfo.environment["COUNTERSIGN_PGCTL"]!
        let argv = [strdup(script), strdup(command), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, script, nil, nil, argv, environ) == 0 else { throw CancellationError() }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        #expect(status == 0, "pg.sh \(command) failed")
    }

    /// Polls `/readyz` until it answers `expected`; returns how long that took.
    private func waitForReadiness(_ client: some TestClientProtocol, _ expected: HTTPResponse.Status, within limit: Duration) async throws -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            let status = try await client.execute(uri: "/readyz", method: .get) { $0.status }
            if status == expected { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test func readyzFollowsTheDatabaseWithoutARestart() async throws {
        let url = ScratchDatabase.baseURL!
        let configuration = ServiceConfiguration(databaseURL: url)
        let database = PostgresClient(configuration: PostgresConfiguration(url: url, poolSize: 2))
        let app = CountersignApplication.make(configuration: configuration, database: database, logger: Logger(label: "test"))
        try await app.test(.live) { client in
            // Generous limits: they only tell "follows the database" from "never follows" on a busy CI machine.
            #expect(try await waitForReadiness(client, .ok, within: .seconds(30)) != nil)
            try Self.control("stop")
            let down = try await waitForReadiness(client, .serviceUnavailable, within: .seconds(15))
            try Self.control("start")
            let up = try await waitForReadiness(client, .ok, within: .seconds(30))
            #expect(down != nil, "readyz did not turn 503 within 15 s of the database stopping")
            #expect(up != nil, "readyz did not return to 200 within 30 s of the database starting")
        }
    }
}
