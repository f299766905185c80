import Foundation
import Postgres
import Testing
import TestSupport

/// Issue 19, "two database roles", against the built binary: `migrate` connects as the owner and
/// grants the runtime role; `keys` works as the runtime role; `serve` refuses a role that could
/// rewrite evidence, and a schema the runtime role may not migrate.
@Suite("Database roles (the countersign binary)",
       .needsTwoRoles)
struct DatabaseRoleTests {
    /// Starts `serve` as `url` with a generated checkpoint key; returns its run (it is expected to exit).
    static func serve(as url: String, in folder: URL, _ extra: [String: String] = [:]) async throws -> KeyCustodyTests.Run {
        try await KeyCustodyTests.run(["serve", "--no-metrics"],
                                      environment: ["DATABASE_URL": url, "HOST": "127.0.0.1", "PORT": String(try KeyCustodyTests.freePort()),
                                                    "CHECKPOINT_KEY_GENERATE": "true", "DATA_KEY_GENERATE": "true", "DATA_DIR": folder.appendingPathComponent("data").path,
                                                    "MIGRATIONS_DIR": ScratchDatabase.migrationsDirectory.path].merging(extra) { $1 },
                                      in: folder, timeout: 120)
    }

    /// Runs `body` with a new scratch database, dropped afterwards whether `body` returned or threw.
    static func withScratch(prefix: String, migrate: Bool = true, _ body: (ScratchDatabase) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.create(prefix: prefix, migrate: migrate)
        do {
            try await body(scratch)
        } catch {
            await scratch.drop()
            throw error
        }
        await scratch.drop()
    }

    @Test("migrate as the owner grants the runtime role; keys create, list and revoke work as the runtime role")
    func migrateThenKeys() async throws {
        try await Self.withScratch(prefix: "cli_roles", migrate: false) { scratch in
            try await KeyCustodyTests.withFolder { folder in
                let migrated = try await KeyCustodyTests.run(["migrate", "--runtime-role", scratch.runtimeRole],
                                                             environment: ["MIGRATION_DATABASE_URL": scratch.ownerURL,
                                                                           "MIGRATIONS_DIR": ScratchDatabase.migrationsDirectory.path], in: folder)
                #expect(migrated.status == 0, "\(migrated.errors)")
                #expect(migrated.output.contains("runtime role: \(scratch.runtimeRole) privileges granted"), "\(migrated.output)")
                #expect(migrated.output.contains("retention: none (RETENTION_DAYS not set: unchanged)"), "\(migrated.output)")
                // RETENTION_DAYS is stored by migrate, as the owner, and changed only when it differs.
                let environment = ["MIGRATION_DATABASE_URL": scratch.ownerURL, "MIGRATIONS_DIR": ScratchDatabase.migrationsDirectory.path]
                let retained = try await KeyCustodyTests.run(["migrate", "--runtime-role", scratch.runtimeRole],
                                                             environment: environment.merging(["RETENTION_DAYS": "3650"]) { $1 }, in: folder)
                #expect(retained.status == 0 && retained.output.contains("retention: 3650 days (was none)"), "\(retained.output) \(retained.errors)")
                let again = try await KeyCustodyTests.run(["migrate", "--runtime-role", scratch.runtimeRole],
                                                          environment: environment.merging(["RETENTION_DAYS": "3650"]) { $1 }, in: folder)
                #expect(again.output.contains("retention: 3650 days (unchanged)"), "\(again.output)")
                let wrong = try await KeyCustodyTests.run(["migrate", "--runtime-role", scratch.runtimeRole],
                                                          environment: environment.merging(["RETENTION_DAYS": "0"]) { $1 }, in: folder)
                #expect(wrong.status != 0 && wrong.errors.contains("RETENTION_DAYS"), "\(wrong.errors)")
                let created = try await KeyCustodyTests.run(["keys", "create", "--role", "admin", "--name", "roles test"],
                                                            environment: ["DATABASE_URL": scratch.url], in: folder)
                #expect(created.status == 0, "\(created.errors)")
                let listed = try await KeyCustodyTests.run(["keys", "list"], environment: ["DATABASE_URL": scratch.url], in: folder)
                let id = try #require(listed.output.split(separator: "\n").dropFirst().first?.split(separator: "\t").first.map(String.init),
                                      "\(listed.output) \(listed.errors)")
                let revoked = try await KeyCustodyTests.run(["keys", "revoke", id], environment: ["DATABASE_URL": scratch.url], in: folder)
                #expect(revoked.status == 0 && revoked.output.contains("revoked \(id)"), "\(revoked.output) \(revoked.errors)")
            }
        }
    }

    @Test("serve refuses the owner, naming what it owns and the fix")
    func serveRefusesTheOwner() async throws {
        try await Self.withScratch(prefix: "cli_owner") { scratch in
            try await KeyCustodyTests.withFolder { folder in
                let run = try await Self.serve(as: scratch.ownerURL, in: folder)
                #expect(run.status != 0)
                let lines = run.errors.split(separator: "\n").filter { $0.contains("could rewrite or remove evidence") }
                #expect(lines.count == 1, "\(run.errors)")
                #expect(lines.first.map { $0.contains("owns") && $0.contains("proofs") && $0.contains("ALLOW_PRIVILEGED_DATABASE_ROLE") } == true,
                        "\(run.errors)")
            }
        }
    }

    @Test("serve refuses a superuser")
    func serveRefusesASuperuser() async throws {
        try await Self.withScratch(prefix: "cli_super") { scratch in
            let adminURL = try #require(scratch.adminURL, "TEST_DATABASE_ADMIN_URL")
            try await KeyCustodyTests.withFolder { folder in
                let run = try await Self.serve(as: adminURL, in: folder)
                #expect(run.status != 0)
                #expect(run.errors.contains("it is a superuser") && run.errors.contains("could rewrite or remove evidence"), "\(run.errors)")
            }
        }
    }

    @Test("serve warns, naming the fix, when PostgreSQL would log statements with their bound values (tokens among them)")
    func serveWarnsOfLoggedParameters() async throws {
        try await Self.withScratch(prefix: "cli_logparams", migrate: false) { scratch in
            let adminURL = try #require(scratch.adminURL, "TEST_DATABASE_ADMIN_URL")
            _ = try await PostgresClient.withClient(.forTests(url: adminURL, poolSize: 1)) { admin in
                try await admin.query("ALTER DATABASE \(unescaped: scratch.name) SET log_parameter_max_length = -1")
                try await admin.query("ALTER DATABASE \(unescaped: scratch.name) SET log_min_duration_statement = 60000")
            }
            try await KeyCustodyTests.withFolder { folder in
                // Refused for its pending migrations, after the warning: the run ends by itself.
                let run = try await Self.serve(as: scratch.url, in: folder)
                #expect(run.status != 0)
                #expect((run.output + run.errors).contains("SET log_parameter_max_length = 0"), "\(run.output)\(run.errors)")
            }
            _ = try await PostgresClient.withClient(.forTests(url: adminURL, poolSize: 1)) { admin in
                try await admin.query("ALTER DATABASE \(unescaped: scratch.name) SET log_parameter_max_length = 0")
            }
            try await KeyCustodyTests.withFolder { folder in
                let run = try await Self.serve(as: scratch.url, in: folder)
                #expect(!(run.output + run.errors).contains("SET log_parameter_max_length = 0"), "\(run.output)\(run.errors)")
            }
        }
    }

    @Test("serve as the runtime role refuses a schema with migrations pending, naming `countersign migrate`")
    func serveRefusesPendingMigrations() async throws {
        try await Self.withScratch(prefix: "cli_pending", migrate: false) { scratch in
            try await KeyCustodyTests.withFolder { folder in
                let run = try await Self.serve(as: scratch.url, in: folder)
                #expect(run.status != 0)
                #expect(run.errors.contains("run `countersign migrate` as the owner"), "\(run.errors)")
            }
        }
    }
}
