import Foundation
import Logging
import Postgres
import ProofService
import ProofStore

/// What `serve` settles with the database before it serves: the role it connected as must not be
/// able to change evidence, and the schema must be this build's.
enum ServeDatabaseGate {
    /// Why serve does not start; ArgumentParser prints it as the one line of the refusal.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Refuses a privileged role (unless `allowPrivilegedDatabaseRole`), then, under
    /// `migrateOnStart`, migrates when the role may (a privileged one, allowed) or refuses while a
    /// migration is pending (the runtime role may not run DDL: `countersign migrate` does, as the owner).
    static func prepare(database: PostgresClient, configuration: ServiceConfiguration, logger: Logger) async throws {
        let check = try await patiently(logger) { try await DatabaseRoleCheck.run(on: database) }
        try await warnIfParametersLogged(database: database, role: check.role, logger: logger)
        // TEMPORARY is what `migrate` revokes: on a database it has not migrated yet, say to migrate.
        if check.problems == [DatabaseRoleCheck.temporaryTables], configuration.migrateOnStart, !configuration.allowPrivilegedDatabaseRole {
            try await refusePending(database: database, configuration: configuration, role: check.role, logger: logger)
        }
        if check.isPrivileged {
            guard configuration.allowPrivilegedDatabaseRole else { throw Refusal(description: check.refusal) }
            logger.warning("serving as a database role that can rewrite evidence (ALLOW_PRIVILEGED_DATABASE_ROLE: development only)",
                           metadata: ["role": "\(check.role)", "problems": "\(check.problems.joined(separator: "; "))"])
        }
        guard configuration.migrateOnStart else { return }
        if check.isPrivileged {
            try await MigrateCommand.migrate(database: database, directory: configuration.migrationsDirectory, logger: logger)
            // As `migrate` does: a privileged role serving (development) also stores RETENTION_DAYS.
            if let policy = configuration.retentionPolicy { try await RetentionRepository(database: database).setPolicy(policy) }
            return
        }
        try await refusePending(database: database, configuration: configuration, role: check.role, logger: logger)
    }

    /// Warns when PostgreSQL would write statements' bound values to its log: a cancel or a
    /// device-key approval passes the request's bearer token to the function that hashes it
    /// (decision 0041), and a slow one would then leave the token in the server's log. Only a
    /// superuser can change the setting, so serve says how rather than refusing.
    private static func warnIfParametersLogged(database: PostgresClient, role: String, logger: Logger) async throws {
        let row = try await database.query("""
            SELECT (SELECT setting::int FROM pg_settings WHERE name = 'log_parameter_max_length') AS kept,
                (SELECT setting::int FROM pg_settings WHERE name = 'log_min_duration_statement') AS slow,
                current_setting('log_statement') AS statements
            """).rows[0]
        // pg_settings gives the values in their base units (`setting`); current_setting() writes "1min".
        let kept: Int = try row.decode("kept"), slow: Int = try row.decode("slow"), statements: String = try row.decode("statements")
        guard kept != 0, slow >= 0 || statements == "all" else { return }
        logger.warning("""
            PostgreSQL logs statements with their bound values, so a logged cancel or device-key approval would carry its bearer \
            token: as a superuser, ALTER ROLE \(role) SET log_parameter_max_length = 0 (docs/data-protection.md)
            """,
                       metadata: ["log_min_duration_statement": "\(slow)", "log_statement": "\(statements)"])
    }

    /// Refuses while a migration of this build is pending, naming `countersign migrate`.
    private static func refusePending(database: PostgresClient, configuration: ServiceConfiguration, role: String, logger: Logger) async throws {
        let folder = configuration.migrationsDirectory.map { URL(fileURLWithPath: $0) } ?? Migration.defaultDirectory()
        let pending = try await MigrationRunner(client: database, logger: logger).pending(try Migration.load(from: folder))
        guard pending.isEmpty else {
            throw Refusal(description: "the database lacks migration \(pending.map(String.init).joined(separator: ", ")) of this build: "
                + "run `countersign migrate` as the owner (MIGRATION_DATABASE_URL) first; role \(role) may not change the schema")
        }
    }

    /// `body`, retried for up to `patience` while the database is starting (as migrations are).
    private static func patiently<T>(_ logger: Logger, patience: Duration = .seconds(30), _ body: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + patience
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where error.isTransient && ContinuousClock.now < deadline {
                logger.warning("database not reachable yet; retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}
