import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Postgres
import Testing
import TestSupport

/// Where the test PostgreSQL is: `make test` exports these; without them database tests are skipped.
enum TestDatabase {
    /// URL of a fresh test database. These tests exercise our libpq client, not the service, and
    /// make tables of their own: the owner's URL (`TEST_DATABASE_OWNER_URL`), else `TEST_DATABASE_URL`.
    static let url = ProcessInfo.processInfo.environment["TEST_DATABASE_OWNER_URL"] ?? ProcessInfo.processInfo.environment["TEST_DATABASE_URL"]
    /// Superuser URL of the same database (`TEST_DATABASE_ADMIN_URL`).
    static let adminURL = ProcessInfo.processInfo.environment["TEST_DATABASE_ADMIN_URL"]
    /// Script controlling the local cluster (`COUNTERSIGN_PGCTL`, i.e. scripts/pg.sh).
    static let control = ProcessInfo.processInfo.environment["COUNTERSIGN_PGCTL"]

    static var isConfigured: Bool { url != nil }
    static let skipReason: Comment = "TEST_DATABASE_URL is not set: run `make test` to start a local PostgreSQL"

    /// A table name no other test uses: `prefix` and a random number.
    static func uniqueTable(_ prefix: String) -> String {
        "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
    }

    static func client(poolSize: Int = 4, acquireTimeout: Duration = .seconds(10)) -> PostgresClient {
        PostgresClient(configuration: .forTests(url: url!, poolSize: poolSize, acquireTimeout: acquireTimeout))
    }

    /// A new connection to the test database (the caller owns it).
    static func connect() throws -> PostgresConnection {
        try PostgresConnection(url: url!, connectTimeout: PostgresConfiguration.testConnectTimeoutSeconds)
    }

    /// Runs `body` with a fresh client and always shuts the client down afterwards.
    static func withClient<T>(poolSize: Int = 4, acquireTimeout: Duration = .seconds(10),
                              _ body: (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresClient.withClient(.forTests(url: url!, poolSize: poolSize, acquireTimeout: acquireTimeout), body)
    }

    /// Runs `scripts/pg.sh ARGS` to completion (posix_spawn + waitpid: Foundation's `Process`
    /// can miss the child's exit when waited on from a concurrency thread).
    static func runControl(_ arguments: String...) throws {
        let argv = ([control!] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, control!, nil, nil, argv, environ)
        guard spawned == 0 else { throw PostgresError(.queryFailed, message: "cannot run pg.sh: errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw PostgresError(.queryFailed, message: "pg.sh \(arguments) failed with status \(status)") }
    }
}
