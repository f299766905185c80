import Cryptography
import Foundation
import Testing
import TestSupport

/// Issue 19, "Key custody", against the built binary: no command makes a signing key by accident,
/// and `verify` refuses to vouch for a signer nobody pinned.
@Suite("Key custody (the countersign binary)")
struct KeyCustodyTests {
    /// `countersign` next to the test bundle (`.build/<configuration>/`), or `COUNTERSIGN_BINARY`.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["COUNTERSIGN_BINARY"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("countersign")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/countersign").path
    }()

    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs the binary with exactly `environment` (plus PATH), in `directory`, killing it after `timeout` seconds.
    /// The timeout only guards against a hang: CI runs on a busy machine where `migrate` alone has
    /// taken close to a minute while the other suites migrate their own databases. The wait polls
    /// with `Task.sleep` so it never holds one of the test runner's cooperative threads.
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: URL,
                    timeout: Double = 300) async throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin", "LOG_FORMAT": "text"]) { mine, _ in mine }
        process.currentDirectoryURL = directory
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            Issue.record("countersign \(arguments.joined(separator: " ")) still ran after \(timeout) s")
        }
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   output: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                   errors: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// A new empty folder and a scratch database named `prefix_…`, both removed after `body`.
    static func withFolderAndDatabase(prefix: String, _ body: (URL, ScratchDatabase) async throws -> Void) async throws {
        try await withFolder { folder in
            let scratch = try await ScratchDatabase.create(prefix: prefix)
            do {
                try await body(folder, scratch)
            } catch {
                await scratch.drop()
                throw error
            }
            await scratch.drop()
        }
    }

    /// A new empty folder, removed after `body`.
    static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("custody-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// A free TCP port on 127.0.0.1 (bound to port 0, then released).
    static func freePort() throws -> Int {
        try FreePort.find()
    }

    static let unreachableDatabase = "postgres://countersign@127.0.0.1:1/unreachable"

    @Test("export from an empty folder without CHECKPOINT_KEY_FILE fails and creates nothing (even with CHECKPOINT_KEY_GENERATE)")
    func exportNeverGenerates() async throws {
        try await Self.withFolder { folder in
            let run = try await Self.run(["export", "-o", "out.zip"], environment: ["DATABASE_URL": Self.unreachableDatabase,
                                                                                 "CHECKPOINT_KEY_GENERATE": "true"], in: folder)
            #expect(run.status != 0)
            #expect(run.errors.contains("CHECKPOINT_KEY_FILE"), "\(run.errors)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "no .data, no key, no bundle")
        }
    }

    @Test("serve without CHECKPOINT_KEY_FILE or CHECKPOINT_KEY_GENERATE refuses to start with one line naming both")
    func serveRefuses() async throws {
        try await Self.withFolder { folder in
            let run = try await Self.run(["serve", "--no-migrate", "--no-metrics"],
                                         environment: ["DATABASE_URL": Self.unreachableDatabase, "HOST": "127.0.0.1", "PORT": String(try Self.freePort())],
                                         in: folder, timeout: 120)
            #expect(run.status != 0)
            let lines = run.errors.split(separator: "\n").filter { $0.contains("CHECKPOINT_KEY_FILE") }
            #expect(lines.count == 1 && lines[0].contains("CHECKPOINT_KEY_GENERATE=true"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".data").path))
        }
    }

    @Test("serve without DATA_KEY_FILE or DATA_KEY_GENERATE, or with a malformed key file, refuses to start with one line")
    func serveRefusesWithoutDataKeys() async throws {
        try await Self.withFolder { folder in
            let base = ["DATABASE_URL": Self.unreachableDatabase, "HOST": "127.0.0.1", "PORT": String(try Self.freePort()),
                        "CHECKPOINT_KEY_GENERATE": "true", "DATA_DIR": folder.appendingPathComponent("data").path]
            let run = try await Self.run(["serve", "--no-migrate", "--no-metrics"], environment: base, in: folder, timeout: 120)
            #expect(run.status != 0)
            let lines = run.errors.split(separator: "\n").filter { $0.contains("DATA_KEY_FILE") }
            #expect(lines.count == 1 && lines[0].contains("DATA_KEY_GENERATE=true"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("data/data-keys").path), "nothing generated")
            let broken = folder.appendingPathComponent("data-keys")
            try Data("k1 not-a-key\n".utf8).write(to: broken)
            let malformed = try await Self.run(["serve", "--no-migrate", "--no-metrics"], environment: base.merging(["DATA_KEY_FILE": broken.path]) { $1 },
                                               in: folder, timeout: 120)
            #expect(malformed.status != 0)
            let named = malformed.errors.split(separator: "\n").filter { $0.contains(broken.path) }
            #expect(named.count == 1 && named[0].contains("line 1"), "\(malformed.errors)")
        }
    }

    @Test("serve with CHECKPOINT_KEY_GENERATE=true generates the key in DATA_DIR and logs its key id")
    func serveGeneratesWhenAllowed() async throws {
        try await Self.withFolder { folder in
            let data = folder.appendingPathComponent("data")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["serve", "--no-migrate", "--no-metrics"]
            process.environment = ["PATH": "/usr/bin:/bin", "LOG_FORMAT": "text", "DATABASE_URL": Self.unreachableDatabase,
                                   "HOST": "127.0.0.1", "PORT": String(try Self.freePort()), "DATA_DIR": data.path,
                                   "CHECKPOINT_KEY_GENERATE": "true", "DATA_KEY_GENERATE": "true"]
            process.currentDirectoryURL = folder
            let log = Pipe()
            process.standardOutput = log
            process.standardError = log
            try process.run()
            let keyFile = data.appendingPathComponent("checkpoint-ed25519.pem")
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning, Date() < deadline, !FileManager.default.fileExists(atPath: keyFile.path) {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(300))
            process.terminate()
            process.waitUntilExit()
            let text = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let pem = try #require(FileManager.default.contents(atPath: keyFile.path), "\(text)")
            let key = try Ed25519PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
            #expect(text.contains("GENERATED") && text.contains(key.publicKey.keyID), "\(text)")
        }
    }

    @Test("verify: unpinned refuses, --trust-embedded-key warns, a fresh key fails naming it, rotation passes both keys",
          .needsDatabase)
    func verifyPins() async throws {
        try await Self.withFolderAndDatabase(prefix: "custody", Self.checkPins)
    }

    static func checkPins(_ folder: URL, _ scratch: ScratchDatabase) async throws {
        // Two keys, as after a rotation: `old` signed old.zip, `new` signed new.zip.
        let (old, new) = (try Ed25519PrivateKey.generate(), try Ed25519PrivateKey.generate())
        for (name, key) in [("old", old), ("new", new)] {
            try Data(try key.pemRepresentation().utf8).write(to: folder.appendingPathComponent("\(name).pem"))
            try Data(try key.publicKey.pemRepresentation().utf8).write(to: folder.appendingPathComponent("\(name).pub.pem"))
            let export = try await Self.run(["export", "-o", "\(name).zip"],
                                            environment: ["DATABASE_URL": scratch.url, "CHECKPOINT_KEY_FILE": folder.appendingPathComponent("\(name).pem").path],
                                            in: folder)
            #expect(export.status == 0, "\(export.errors)")
            #expect(export.output.contains(key.publicKey.keyID), "\(export.output)")
        }
        let (oldHex, newHex) = (old.publicKey.rawRepresentation.hexString, new.publicKey.rawRepresentation.hexString)

        let unpinned = try await Self.run(["verify", "old.zip"], in: folder)
        #expect(unpinned.status == 2)
        #expect(unpinned.errors.contains("not pinned") && unpinned.errors.contains("--trust-embedded-key"), "\(unpinned.errors)")
        let database = try await Self.run(["verify", "--database", "--database-url", scratch.url], in: folder)
        #expect(database.status == 2 && database.errors.contains("not pinned"), "\(database.errors)")

        let embedded = try await Self.run(["verify", "old.zip", "--trust-embedded-key"], in: folder)
        #expect(embedded.status == 0, "\(embedded.output)\(embedded.errors)")
        #expect(embedded.errors.contains("WARNING: SIGNER NOT CHECKED"), "\(embedded.errors)")

        // new.zip is what a fresh key produces: with only the old key pinned it fails, naming the new key's id.
        let fresh = try await Self.run(["verify", "new.zip", "--public-key", oldHex], in: folder)
        #expect(fresh.status == 1)
        #expect(fresh.output.contains("INVALID public_key.pem") && fresh.output.contains(new.publicKey.keyID), "\(fresh.output)")
        let freshCheckpoint = try await Self.run(["verify", "--database", "--database-url", scratch.url, "--public-key", oldHex], in: folder)
        #expect(freshCheckpoint.status == 1)
        #expect(freshCheckpoint.output.contains("checkpoint_untrusted_key") && freshCheckpoint.output.contains(new.publicKey.keyID),
                "\(freshCheckpoint.output)")

        // Both trusted, from each source: either bundle passes, and so do the stored checkpoints.
        try Data("# checkpoint keys\n\(oldHex)  # until the rotation\n\(folder.appendingPathComponent("new.pub.pem").path)\n".utf8)
            .write(to: folder.appendingPathComponent("trusted.txt"))
        let pinnings: [([String], [String: String])] = [
            (["--public-key", oldHex, "--public-key", folder.appendingPathComponent("new.pub.pem").path], [:]),
            (["--trusted-keys", "trusted.txt"], [:]),
            ([], ["COUNTERSIGN_TRUSTED_KEYS": "\(oldHex), \(newHex)"]),
        ]
        for (options, environment) in pinnings {
            for bundle in ["old.zip", "new.zip"] {
                let run = try await Self.run(["verify", bundle] + options, environment: environment, in: folder)
                #expect(run.status == 0 && run.output.contains("signer trusted"), "\(bundle) \(options) \(environment): \(run.output)\(run.errors)")
                #expect(!run.errors.contains("WARNING"))
            }
            let run = try await Self.run(["verify", "--database", "--database-url", scratch.url] + options, environment: environment, in: folder)
            #expect(run.status == 0, "\(options) \(environment): \(run.output)\(run.errors)")
        }
    }
}
