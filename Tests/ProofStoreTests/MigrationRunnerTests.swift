import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

@Suite("Migrations", .needsDatabase)
struct MigrationRunnerTests {
    /// Three migrations that fail if any one is applied twice (plain CREATE TABLE, counted inserts).
    private let sample = [
        Migration(version: 1, name: "0001_counter", sql: "CREATE TABLE applied_log (version int PRIMARY KEY, at timestamptz DEFAULT clock_timestamp());\nINSERT INTO applied_log (version) VALUES (1);"),
        Migration(version: 2, name: "0002_things", sql: "CREATE TABLE things (id int PRIMARY KEY); INSERT INTO applied_log (version) VALUES (2); SELECT pg_sleep(0.2);"),
        Migration(version: 10, name: "0010_more", sql: "ALTER TABLE things ADD COLUMN label text; INSERT INTO applied_log (version) VALUES (10);"),
    ]

    private func withEmptyDatabase(_ body: (ScratchDatabase) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.create(prefix: "migr", migrate: false)
        do {
            try await body(scratch)
            await scratch.drop()
        } catch {
            await scratch.drop()
            throw error
        }
    }

    @Test func appliesInOrderOnceAndRecordsChecksums() async throws {
        try await withEmptyDatabase { scratch in
            let client = scratch.ownerClient(poolSize: 1)
            let runner = MigrationRunner(client: client)
            #expect(try await runner.migrate(sample) == [1, 2, 10])
            #expect(try await runner.migrate(sample) == [])
            let applied = try await runner.applied()
            #expect(applied == Dictionary(uniqueKeysWithValues: sample.map { ($0.version, $0.checksum) }))
            let order = try await client.query("SELECT version FROM applied_log ORDER BY at").rows.map { try $0.decode(Int.self, 0) }
            #expect(order == [1, 2, 10])
            await client.shutdown()
        }
    }

    @Test func twoMigratorsAtOnceApplyEachMigrationOnce() async throws {
        try await withEmptyDatabase { scratch in
            let first = scratch.ownerClient(poolSize: 1)
            let second = scratch.ownerClient(poolSize: 1)
            async let a = MigrationRunner(client: first).migrate(sample)
            async let b = MigrationRunner(client: second).migrate(sample)
            let (appliedByA, appliedByB) = try await (a, b)
            #expect(Set(appliedByA).isDisjoint(with: appliedByB))
            #expect((appliedByA + appliedByB).sorted() == [1, 2, 10])
            let count = try await first.query("SELECT count(*) FROM applied_log").decode(Int.self, row: 0, column: 0)
            #expect(count == 3)
            await first.shutdown()
            await second.shutdown()
        }
    }

    @Test func aChangedAppliedMigrationIsRefused() async throws {
        try await withEmptyDatabase { scratch in
            let client = scratch.ownerClient(poolSize: 1)
            let runner = MigrationRunner(client: client)
            try await runner.migrate(Array(sample.prefix(2)))
            var edited = sample
            edited[1] = Migration(version: 2, name: "0002_things", sql: sample[1].sql + "\n-- edited after release")
            do {
                try await runner.migrate(edited)
                Issue.record("an edited migration was accepted")
            } catch let error as MigrationError {
                guard case .checksumMismatch(let version, _, _, _) = error else { Issue.record("wrong error \(error)"); return }
                #expect(version == 2)
            }
            // Nothing after the mismatch ran.
            #expect(try await runner.applied().keys.sorted() == [1, 2])
            await client.shutdown()
        }
    }

    @Test func aFailingMigrationLeavesNoTrace() async throws {
        try await withEmptyDatabase { scratch in
            let client = scratch.ownerClient(poolSize: 1)
            let runner = MigrationRunner(client: client)
            let broken = [sample[0], Migration(version: 2, name: "0002_broken", sql: "CREATE TABLE half (id int); SELECT * FROM no_such_table;")]
            do {
                try await runner.migrate(broken)
                Issue.record("a broken migration succeeded")
            } catch let error as MigrationError {
                guard case .failed(let version, _, let message) = error else { Issue.record("wrong error \(error)"); return }
                #expect(version == 2)
                #expect(message.contains("no_such_table"))
            }
            #expect(try await runner.applied().keys.sorted() == [1])
            let half = try await client.query("SELECT to_regclass('half') IS NULL").decode(Bool.self, row: 0, column: 0)
            #expect(half)
            // The lock was released: another run proceeds.
            #expect(try await runner.migrate([sample[0]]) == [])
            await client.shutdown()
        }
    }

    @Test func aDatabaseFromANewerReleaseIsRefused() async throws {
        try await withEmptyDatabase { scratch in
            let client = scratch.ownerClient(poolSize: 1)
            let runner = MigrationRunner(client: client)
            try await runner.migrate(sample)
            await #expect(throws: MigrationError.unknownAppliedVersion(10, "0010_more")) {
                try await runner.migrate(Array(sample.prefix(2)))
            }
            await client.shutdown()
        }
    }

    @Test func theShippedMigrationsApplyToARealDatabase() async throws {
        try await withEmptyDatabase { scratch in
            let client = scratch.ownerClient(poolSize: 1)
            let shipped = try Migration.load(from: ScratchDatabase.migrationsDirectory)
            #expect(!shipped.isEmpty)
            #expect(try await MigrationRunner(client: client).migrate(shipped) == shipped.map(\.version))
            await client.shutdown()
        }
    }
}

@Suite("Migration files")
struct MigrationFileTests {
    /// Runs `body` with a new folder holding `files`, and removes the folder afterwards.
    private func withDirectory<T>(_ files: [String: String], _ body: (URL) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return try body(folder)
    }

    @Test func loadsInNumericOrderAndIgnoresOtherFiles() throws {
        let loaded = try withDirectory(["0010_b.sql": "SELECT 2;", "0002_a.sql": "SELECT 1;", "README.md": "notes"]) {
            try Migration.load(from: $0)
        }
        #expect(loaded.map(\.version) == [2, 10])
        #expect(loaded.map(\.name) == ["0002_a", "0010_b"])
        #expect(loaded[0].checksum == "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a")  // sha256 of "SELECT 1;"
        #expect(loaded[0].checksum != loaded[1].checksum)
    }

    @Test func rejectsBadNamesAndDuplicateVersions() throws {
        #expect(throws: MigrationError.badFileName("init.sql")) {
            try withDirectory(["init.sql": "SELECT 1;"]) { try Migration.load(from: $0) }
        }
        #expect(throws: MigrationError.self) {
            try withDirectory(["0001_a.sql": "SELECT 1;", "001_b.sql": "SELECT 2;"]) { try Migration.load(from: $0) }
        }
    }
}
