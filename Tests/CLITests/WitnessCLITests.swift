import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Issue 19 item 3 end to end: `serve` signs checkpoints on its schedule into the witness
/// directory, and `verify --database --checkpoints` uses them (exit 0 intact, 1 when the database
/// lost a witnessed checkpoint).
@Suite("Witnessed checkpoints (the countersign binary)", .needsDatabase)
struct WitnessCLITests {
    @Test("serve writes scheduled checkpoints to CHECKPOINT_WITNESS_DIR; verify --checkpoints passes, then names a deleted one")
    func scheduleAndVerify() async throws {
        try await KeyCustodyTests.withFolderAndDatabase(prefix: "witcli", Self.check)
    }

    static func check(_ folder: URL, _ scratch: ScratchDatabase) async throws {
        let key = try Ed25519PrivateKey.generate()
        let keyFile = folder.appendingPathComponent("key.pem")
        try Data(try key.pemRepresentation().utf8).write(to: keyFile)
        let witness = folder.appendingPathComponent("witness")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: KeyCustodyTests.binary)
        process.arguments = ["serve", "--no-metrics"]
        process.environment = ["PATH": "/usr/bin:/bin", "LOG_FORMAT": "text", "DATABASE_URL": scratch.url, "HOST": "127.0.0.1",
                               "PORT": String(try KeyCustodyTests.freePort()), "CHECKPOINT_KEY_FILE": keyFile.path,
                               "CHECKPOINT_INTERVAL_SECONDS": "1", "CHECKPOINT_WITNESS_DIR": witness.path, "DATA_KEY_GENERATE": "true",
                               "MIGRATIONS_DIR": ScratchDatabase.migrationsDirectory.path]
        process.currentDirectoryURL = folder
        let log = Pipe()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let client = scratch.client(poolSize: 1)
        var stored = 0
        do {
            let audit = AuditLog(database: client)
            for index in 0..<10 { try await audit.append(.proofPNGRead, subject: "delivery:C-\(index)", origin: .system) }
            // Wait (bounded) until a scheduled checkpoint covers the newest event and every stored one has its file.
            let deadline = Date().addingTimeInterval(90)
            while process.isRunning, Date() < deadline {
                let row = try await client.query("""
                    SELECT (SELECT max(seq) FROM audit_checkpoints) = (SELECT max(seq) FROM audit_events) AS covered,
                        (SELECT count(*) FROM audit_checkpoints)::int8 AS stored
                    """).first
                stored = Int(try row?.decode(Int64.self, "stored") ?? 0)
                let files = (try? FileManager.default.contentsOfDirectory(atPath: witness.path))?.filter { $0.hasSuffix(".json") }.count ?? 0
                if try row?.decode(Bool?.self, "covered") == true, files == stored { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
        process.terminate()
        process.waitUntilExit()
        let files = try FileManager.default.contentsOfDirectory(atPath: witness.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(!files.isEmpty && files.count == stored, "\(String(decoding: log.fileHandleForReading.availableData, as: UTF8.self))")

        let pin = ["--public-key", key.publicKey.rawRepresentation.hexString]
        let full = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--checkpoints", witness.path] + pin,
                                                 in: folder)
        #expect(full.status == 0, "\(full.output)\(full.errors)")
        #expect(full.output.contains("witnessed checkpoints: \(files.count) checked") && full.output.contains("unwitnessed window: 0 events"),
                "\(full.output)")
        let incremental = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--checkpoints", witness.path,
                                                         "--from-checkpoint", "--json"] + pin, in: folder)
        #expect(incremental.status == 0, "\(incremental.output)\(incremental.errors)")
        #expect(incremental.output.contains(#""started_after":"\#(files[files.count - 1])""#) && incremental.output.contains(#""count":0"#),
                "\(incremental.output)")

        try await scratch.asSuperuser { admin in
            try await admin.withConnection { session in
                for statement in ["ALTER TABLE audit_checkpoints DISABLE TRIGGER USER", "ALTER TABLE audit_checkpoint_witnesses DISABLE TRIGGER USER",
                                  "DELETE FROM audit_checkpoint_witnesses", "DELETE FROM audit_checkpoints",
                                  "ALTER TABLE audit_checkpoints ENABLE TRIGGER USER", "ALTER TABLE audit_checkpoint_witnesses ENABLE TRIGGER USER"] {
                    try await session.execute(statement)
                }
            }
        }
        let tampered = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--checkpoints", witness.path] + pin,
                                                     in: folder)
        #expect(tampered.status == 1)
        #expect(tampered.output.contains("witness_checkpoint_missing") && tampered.output.contains("witness:\(files[0])"), "\(tampered.output)")
    }
}
