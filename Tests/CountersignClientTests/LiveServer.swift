import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport

/// The built `countersign` binary serving a scratch database on a free port, as a courier app
/// would meet it: URLSession cannot talk to Hummingbird's in-process test client, so the SDK is
/// tested against the real server over TCP.
final class LiveServer: Sendable {
    let baseURL: URL
    let databaseURL: String
    private let process: Process
    private let folder: String

    /// `countersign` beside the test bundle (`.build/<configuration>/`), or `COUNTERSIGN_BINARY`.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["COUNTERSIGN_BINARY"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("countersign")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/countersign").path
    }()

    /// Starts a server on `scratch` (or on `port`, when a test reserved one earlier), with `settings` added to its
    /// environment, and waits until `/readyz` answers.
    init(scratch: ScratchDatabase, port: Int? = nil, settings: [String: String] = [:]) async throws {
        let port = try port ?? Self.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-live-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        databaseURL = scratch.url
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--no-metrics"]
        process.environment = ["PATH": "/usr/bin:/bin", "LOG_LEVEL": "error", "DATABASE_URL": scratch.url, "HOST": "127.0.0.1",
                               "PORT": String(port), "DATA_DIR": folder + "/data", "CHECKPOINT_KEY_GENERATE": "true", "DATA_KEY_GENERATE": "true",
                               "MIGRATIONS_DIR": ScratchDatabase.migrationsDirectory.path].merging(settings) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for _ in 0..<300 {
            guard process.isRunning else { break }
            if await Self.isReady(baseURL) { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        stop()
        throw LiveServerError(message: "countersign serve did not become ready on \(baseURL)")
    }

    /// Stops the server (SIGTERM, then waits).
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A new API key of `role` (`countersign keys create`); its token.
    func createKey(role: String) throws -> String {
        let keys = Process()
        keys.executableURL = URL(fileURLWithPath: Self.binary)
        keys.arguments = ["keys", "create", "--role", role, "--name", "sdk test \(role)"]
        keys.environment = ["PATH": "/usr/bin:/bin", "DATABASE_URL": databaseURL, "LOG_LEVEL": "error"]
        let output = Pipe()
        keys.standardOutput = output
        keys.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try keys.run()
        keys.waitUntilExit()
        let token = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard keys.terminationStatus == 0, !token.isEmpty else { throw LiveServerError(message: "keys create --role \(role) failed") }
        return token
    }

    private static func isReady(_ baseURL: URL) async -> Bool {
        var request = URLRequest(url: baseURL.appendingPathComponent("readyz"), timeoutInterval: 2)
        request.httpMethod = "GET"
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    /// A free TCP port on 127.0.0.1 (bound to port 0, then released).
    static func freePort() throws -> Int {
        try FreePort.find()
    }
}

struct LiveServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
