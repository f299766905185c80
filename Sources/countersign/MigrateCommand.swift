import ArgumentParser
import Foundation
import Logging
import Postgres
import ProofService
import ProofStore

/// `countersign migrate`: apply pending SQL migrations as the owner, then renew the runtime role's grants.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations, each in its own transaction, then grant the runtime role what serving needs.",
        discussion: """
            Connects as the owner of the schema (--database-url, else MIGRATION_DATABASE_URL, else DATABASE_URL). \
            The runtime role (--runtime-role / RUNTIME_ROLE, default countersign_app) is what `serve` connects as: \
            migrate creates it with LOGIN when RUNTIME_ROLE_PASSWORD is given (the owner then needs CREATEROLE), \
            or uses the existing one, and gives it exactly the privileges serving needs.
            """
    )

    @Option(name: .customLong("database-url"), help: "libpq URL of the owner (MIGRATION_DATABASE_URL, else DATABASE_URL).")
    var databaseURL: String?
    @Option(help: "Folder of numbered SQL migrations (MIGRATIONS_DIR, default ./migrations).") var migrationsDir: String?
    @Option(help: "The role serve connects as (RUNTIME_ROLE, default countersign_app).") var runtimeRole: String?

    func run() async throws {
        let environment = try ServiceConfiguration.fromEnvironment()
        LoggingSetup.bootstrap(level: environment.logLevel, format: .text)
        let logger = Logger(label: "countersign.migrate")
        let variables = ProcessInfo.processInfo.environment
        func value(_ name: String) -> String? { variables[name].flatMap { $0.isEmpty ? nil : $0 } }
        // The password is read from the environment only: an option would show in `ps`.
        let role = try RuntimeRole(name: runtimeRole ?? value("RUNTIME_ROLE") ?? RuntimeRole.defaultName,
                                   password: value("RUNTIME_ROLE_PASSWORD"))
        let url = databaseURL ?? value("MIGRATION_DATABASE_URL") ?? environment.databaseURL
        let database = PostgresClient(configuration: .forCommand(url: url))
        do {
            let applied = try await Self.migrate(database: database, directory: migrationsDir ?? environment.migrationsDirectory, logger: logger)
            print(applied.isEmpty ? "migrations: up to date" : "migrations: applied \(applied.map(String.init).joined(separator: ", "))")
            switch try await role.apply(on: database) {
            case .created: print("runtime role: \(role.name) created with LOGIN; privileges granted")
            case .passwordSet: print("runtime role: \(role.name) password set; privileges granted")
            case .existing: print("runtime role: \(role.name) privileges granted")
            }
            // The policy is the owner's to set: the runtime role only reads it, and erases what it makes due.
            let retention = RetentionRepository(database: database)
            if let policy = environment.retentionPolicy {
                let previous = try await retention.setPolicy(policy)
                print(previous == policy ? "retention: \(policy) (unchanged)" : "retention: \(policy) (was \(previous))")
            } else {
                print("retention: \(try await retention.policy()) (RETENTION_DAYS not set: unchanged)")
            }
            // Monthly partitions for the current month and three ahead; a failure is logged (error) and
            // retried by every serving replica, so it does not fail the migration.
            let partitions = PartitionMaintenance(database: database, logger: Logger(label: "countersign.partitions"))
            do {
                let outcomes = try await partitions.run()
                let created = outcomes.filter { $0.error == nil }.map(\.partition)
                print(created.isEmpty ? "partitions: none missing" : "partitions: created \(created.joined(separator: ", "))")
            } catch {
                logger.error("partition maintenance failed", metadata: ["error": "\(error)"])
            }
            await database.shutdown()
        } catch {
            await database.shutdown()
            throw error
        }
    }

    /// Loads the migrations and applies them, retrying for up to `patience` while the database is starting.
    @discardableResult
    static func migrate(database: PostgresClient, directory: String?, logger: Logger, patience: Duration = .seconds(30)) async throws -> [Int] {
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Migration.defaultDirectory()
        let migrations = try Migration.load(from: folder)
        let runner = MigrationRunner(client: database, logger: logger)
        let deadline = ContinuousClock.now + patience
        while true {
            do {
                return try await runner.migrate(migrations)
            } catch let error as PostgresError where error.isTransient && ContinuousClock.now < deadline {
                logger.warning("database not reachable yet; retrying migrations", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}
