import Cryptography
import Foundation
import Postgres
import ProofStore

/// The one migrated database per test server that migrated scratch databases are copied from.
///
/// Its name carries a digest of every migration and the runtime role, so a changed migration
/// gets a new template and a test run never copies a stale schema. It is built under a private
/// name and renamed only when complete: a run that dies half-way leaves nothing that looks
/// finished, and two test processes on one server end up sharing one template.
public actor MigratedTemplate {
    public static let shared = MigratedTemplate()

    private var building: Task<String, any Error>?

    /// The template's name, building it on first use (later callers wait for the same build).
    public func name() async throws -> String {
        if let building { return try await building.value }
        let task = Task { try await Self.build() }
        building = task
        do {
            return try await task.value
        } catch {
            building = nil  // the next suite tries again rather than inheriting one failure
            throw error
        }
    }

    private static func build() async throws -> String {
        guard let baseOwnerURL = ScratchDatabase.baseOwnerURL, let baseURL = ScratchDatabase.baseURL else {
            throw PostgresError(.invalidConfiguration, message: ScratchDatabase.unavailableReason)
        }
        let migrations = try Migration.load(from: ScratchDatabase.migrationsDirectory)
        let runtimeRole = URLComponents(string: baseURL)?.user ?? RuntimeRole.defaultName
        let grants = baseURL == baseOwnerURL ? "owner-only" : runtimeRole
        let digest = SHA256.hex(Array((migrations.map(\.checksum) + [grants]).joined(separator: "\n").utf8))
        let name = "scratch_template_\(digest.prefix(16))"

        let postgres = ScratchDatabase.replacingDatabase(in: baseOwnerURL, with: "postgres")
        let exists = try await PostgresClient.withClient(.forTests(url: postgres, poolSize: 1)) { maintenance in
            try await maintenance.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]).rowCount == 1
        }
        if exists { return name }

        let partial = "\(name)_building_\(UInt32.random(in: 0...UInt32.max))"
        try await ScratchDatabase.createDatabase(partial, template: nil)
        let scratch = ScratchDatabase(url: ScratchDatabase.replacingDatabase(in: baseURL, with: partial),
                                      ownerURL: ScratchDatabase.replacingDatabase(in: baseOwnerURL, with: partial),
                                      adminURL: nil, name: partial)
        do {
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { client in
                try await MigrationRunner(client: client).migrate(migrations)
                try await scratch.grantRuntimeRole(client)
            }
            try await PostgresClient.withClient(.forTests(url: postgres, poolSize: 1)) { maintenance in
                // Another process may have finished the same template meanwhile: keep theirs.
                let taken = try await maintenance.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]).rowCount == 1
                if taken {
                    try await maintenance.query("DROP DATABASE \(unescaped: partial) WITH (FORCE)")
                } else {
                    try await maintenance.query("ALTER DATABASE \(unescaped: partial) RENAME TO \(unescaped: name)")
                }
            }
        } catch {
            await scratch.drop()
            throw error
        }
        return name
    }
}
