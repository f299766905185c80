import Foundation
import Postgres
import ProofStore

/// A throwaway PostgreSQL database for one test or suite, created on the server `make test` started.
///
/// Tests run in parallel; each scratch database isolates its test's rows and schema. It is
/// created and migrated by the owner role with the repository's `migrations/` unless asked not
/// to, its runtime role granted what `countersign migrate` grants, and dropped by `drop()`. The
/// service under test connects as the runtime role (`url`), as in production.
public struct ScratchDatabase: Sendable {
    /// Runtime-role URL of the scratch database: what the service connects as.
    public let url: String
    /// Owner-role URL of the scratch database: migrations, and set-up that needs DDL.
    public let ownerURL: String
    /// Superuser URL of the scratch database.
    public let adminURL: String?
    /// Its name.
    public let name: String

    /// `TEST_DATABASE_URL`: runtime-role URL of the test database made by `make test`.
    public static let baseURL = ProcessInfo.processInfo.environment["TEST_DATABASE_URL"]
    /// `TEST_DATABASE_OWNER_URL`: owner-role URL of the same database (without it, `baseURL`).
    public static let baseOwnerURL = ProcessInfo.processInfo.environment["TEST_DATABASE_OWNER_URL"] ?? baseURL
    /// `TEST_DATABASE_ADMIN_URL`: superuser URL of the same server.
    public static let baseAdminURL = ProcessInfo.processInfo.environment["TEST_DATABASE_ADMIN_URL"]
    /// True when a test server is configured.
    public static var isAvailable: Bool { baseURL != nil }
    /// Why database tests are skipped when it is not.
    public static let unavailableReason = "TEST_DATABASE_URL is not set: run `make test`, which starts a local PostgreSQL"

    /// The repository's `migrations/` folder.
    public static let migrationsDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("migrations")

    /// Creates and (by default) migrates a new database named `prefix_<random>`.
    public static func create(prefix: String = "scratch", migrate: Bool = true) async throws -> ScratchDatabase {
        guard let baseURL, let baseOwnerURL else { throw PostgresError(.invalidConfiguration, message: unavailableReason) }
        let name = "\(prefix)_\(UInt64.random(in: 0...UInt64.max) % 1_000_000_000_000)".lowercased()
        // A migrated database is a copy of one migrated template rather than 18 migrations run
        // again: dozens of suites migrating at once on a busy 2-core CI machine took close to a
        // minute each. The copy is the same schema, rows and grants `countersign migrate` makes.
        let template = migrate ? try await MigratedTemplate.shared.name() : nil
        try await createDatabase(name, template: template)
        return ScratchDatabase(url: replacingDatabase(in: baseURL, with: name), ownerURL: replacingDatabase(in: baseOwnerURL, with: name),
                               adminURL: baseAdminURL.map { replacingDatabase(in: $0, with: name) }, name: name)
    }

    /// `CREATE DATABASE name [TEMPLATE template]` as the owner, through the `postgres` database.
    static func createDatabase(_ name: String, template: String?) async throws {
        guard let baseOwnerURL else { throw PostgresError(.invalidConfiguration, message: unavailableReason) }
        try await PostgresClient.withClient(.forTests(url: replacingDatabase(in: baseOwnerURL, with: "postgres"), poolSize: 1)) { maintenance in
            if let template {
                try await maintenance.query("CREATE DATABASE \(unescaped: name) TEMPLATE \(unescaped: template)")
                // The copy has the template's schema and grants but not its database ACL (pg_database
                // is shared): take TEMPORARY away again, as `countersign migrate` does.
                let role = baseURL.flatMap { URLComponents(string: $0)?.user } ?? RuntimeRole.defaultName
                for statement in RuntimeRole.databaseGrants(role: role, database: name) where baseURL != baseOwnerURL {
                    try await maintenance.query("\(unescaped: statement)")
                }
            } else {
                try await maintenance.query("CREATE DATABASE \(unescaped: name)")
            }
        }
    }

    /// The runtime role's name: the user of `url`.
    public var runtimeRole: String { URLComponents(string: url)?.user ?? RuntimeRole.defaultName }

    /// Grants the runtime role what `countersign migrate` grants, through `owner` (a client of the
    /// owner). Nothing when the runtime role is the owner (a `TEST_DATABASE_URL` of one role).
    public func grantRuntimeRole(_ owner: PostgresClient) async throws {
        guard url != ownerURL else { return }
        try await RuntimeRole(name: runtimeRole).apply(on: owner)
    }

    /// A new client on the scratch database as the runtime role (the caller shuts it down).
    public func client(poolSize: Int = 4) -> PostgresClient {
        PostgresClient(configuration: .forTests(url: url, poolSize: poolSize))
    }

    /// A new client on the scratch database as the owner (the caller shuts it down).
    public func ownerClient(poolSize: Int = 4) -> PostgresClient {
        PostgresClient(configuration: .forTests(url: ownerURL, poolSize: poolSize))
    }

    /// Runs `body` with a one-connection superuser client on this database (tampering, or a migration from another
    /// session, as someone with full access would), and shuts the client down whether `body` returned or threw.
    public func asSuperuser<T: Sendable>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        guard let adminURL else {
            throw PostgresError(.invalidConfiguration, message: "TEST_DATABASE_ADMIN_URL is needed to act as the superuser")
        }
        return try await PostgresClient.withClient(.forTests(url: adminURL, poolSize: 1), body)
    }

    /// Drops the database, disconnecting anyone still on it.
    public func drop() async {
        guard let baseOwnerURL = Self.baseOwnerURL else { return }
        let maintenance = PostgresClient(configuration: .forTests(url: Self.replacingDatabase(in: baseOwnerURL, with: "postgres"), poolSize: 1))
        _ = try? await maintenance.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)")
        await maintenance.shutdown()
    }

    /// Runs `body` with a fresh migrated database and a client on it; drops both afterwards.
    public static func with<T: Sendable>(prefix: String = "scratch", poolSize: Int = 4,
                                         _ body: (ScratchDatabase, PostgresClient) async throws -> T) async throws -> T {
        let scratch = try await create(prefix: prefix)
        return try await scratch.using(poolSize: poolSize) { client in try await body(scratch, client) }
    }

    /// Runs `body` with a fresh database migrated only through `version` (for migration tests:
    /// write rows the way older versions did, then apply the rest) and an owner client on it (the
    /// one that migrates; no runtime role grants); `body` also gets every migration. Drops both afterwards.
    public static func with<T: Sendable>(prefix: String, poolSize: Int = 2, migratedThrough version: Int,
                                         _ body: (ScratchDatabase, PostgresClient, [Migration]) async throws -> T) async throws -> T {
        let scratch = try await create(prefix: prefix, migrate: false)
        return try await scratch.using(poolSize: poolSize, asOwner: true) { client in
            let migrations = try Migration.load(from: migrationsDirectory)
            _ = try await MigrationRunner(client: client).migrate(migrations.filter { $0.version <= version })
            return try await body(scratch, client, migrations)
        }
    }

    /// Runs `body` with a client on this database, then shuts the client down and drops the
    /// database, whether `body` returned or threw.
    private func using<T: Sendable>(poolSize: Int, asOwner: Bool = false, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let client = asOwner ? ownerClient(poolSize: poolSize) : client(poolSize: poolSize)
        do {
            let value = try await body(client)
            await client.shutdown()
            await drop()
            return value
        } catch {
            await client.shutdown()
            await drop()
            throw error
        }
    }

    static func replacingDatabase(in url: String, with database: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/" + database
        return components.string ?? url
    }
}
