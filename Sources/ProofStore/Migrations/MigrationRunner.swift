import Logging
import Postgres

/// Applies numbered migrations in order, each in its own transaction, recording each in
/// `schema_migrations` with its checksum.
///
/// A session-level `pg_advisory_lock` serialises migrators, so replicas starting together apply
/// each migration exactly once: the second waits, then finds nothing left to do.
public struct MigrationRunner: Sendable {
    /// Arbitrary constant identifying Countersign's migration lock ("CSMIGRAT" as ASCII).
    public static let advisoryLockKey: Int64 = 0x4353_4D49_4752_4154

    let client: PostgresClient
    let logger: Logger

    /// Creates a runner over `client`.
    public init(client: PostgresClient, logger: Logger = Logger(label: "countersign.migrations")) {
        self.client = client
        self.logger = logger
    }

    /// Applies every migration not yet applied; returns the versions applied by this call.
    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws -> [Int] {
        try await client.withConnection { session in
            try await session.execute("SELECT pg_advisory_lock(\(Self.advisoryLockKey))")
            do {
                let applied = try await run(migrations, on: session)
                try await session.execute("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                return applied
            } catch {
                // A broken connection releases the session lock by itself; otherwise release it here.
                try? await session.execute("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                throw error
            }
        }
    }

    /// The versions and checksums recorded as applied.
    public func applied() async throws -> [Int: String] {
        try await client.withConnection { session in try await appliedVersions(session) }
    }

    /// The versions of `migrations` not applied yet, asked without taking the migration lock or
    /// writing anything: what `serve`, connected as the runtime role (no DDL), may ask.
    public func pending(_ migrations: [Migration]) async throws -> [Int] {
        try await client.withConnection { session in
            guard try await hasMigrationTable(session) else { return migrations.map(\.version) }
            let applied = try await session.query("SELECT version FROM schema_migrations").rows.map { try $0.decode(Int.self, "version") }
            return migrations.map(\.version).filter { !Set(applied).contains($0) }
        }
    }

    private func hasMigrationTable(_ session: PostgresSession) async throws -> Bool {
        try await session.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").decode(Bool.self, row: 0, column: "present")
    }

    private func appliedVersions(_ session: PostgresSession) async throws -> [Int: String] {
        // Created only when missing: CREATE TABLE IF NOT EXISTS would still need CREATE on the
        // schema, which only the owner has.
        if try await !hasMigrationTable(session) {
            try await session.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    bigint PRIMARY KEY,
                    name       text NOT NULL,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        }
        let rows = try await session.query("SELECT version, checksum FROM schema_migrations").rows
        var applied: [Int: String] = [:]
        for row in rows {
            let (version, checksum) = try row.decode((Int, String).self)
            applied[version] = checksum
        }
        return applied
    }

    private func run(_ migrations: [Migration], on session: PostgresSession) async throws -> [Int] {
        let applied = try await appliedVersions(session)
        let known = Set(migrations.map(\.version))
        if let stray = applied.keys.sorted().first(where: { !known.contains($0) }) {
            let name = try await session.query("SELECT name FROM schema_migrations WHERE version = \(stray)")
                .decode(String.self, row: 0, column: "name")
            throw MigrationError.unknownAppliedVersion(stray, name)
        }
        var done: [Int] = []
        for migration in migrations {
            if let checksum = applied[migration.version] {
                guard checksum == migration.checksum else {
                    throw MigrationError.checksumMismatch(version: migration.version, name: migration.name,
                                                          applied: checksum, found: migration.checksum)
                }
                continue
            }
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
            do {
                try await session.execute("BEGIN")
                try await session.executeScript(migration.sql)
                try await session.execute("""
                    INSERT INTO schema_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """)
                try await session.execute("COMMIT")
            } catch {
                try? await session.execute("ROLLBACK")
                let message = (error as? PostgresError)?.description ?? String(describing: error)
                throw MigrationError.failed(version: migration.version, name: migration.name, message: message)
            }
            done.append(migration.version)
        }
        return done
    }
}
