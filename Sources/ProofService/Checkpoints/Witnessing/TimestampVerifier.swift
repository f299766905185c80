import Foundation
import Execution

/// Checks the RFC 3161 tokens beside witness files with `openssl ts -verify`: the token's
/// signature chains to the TSA's CA certificate (`--tsa-ca`), and its message imprint is SHA-256
/// of the exact checkpoint file. OpenSSL's own verifier is used rather than a hand-written CMS
/// check (docs/decisions/0024-witnessed-checkpoints.md); `openssl` must be on the PATH or at ``executable``.
public struct TimestampVerifier: Sendable {
    /// The TSA's CA certificate (PEM).
    public let caFile: String
    /// The `openssl` binary.
    public var executable: String

    /// A verifier trusting the CA in `caFile`.
    public init(caFile: String, executable: String = TimestampVerifier.defaultExecutable) {
        self.caFile = caFile
        self.executable = executable
    }

    /// `openssl` as found on the PATH (else `/usr/bin/openssl`).
    public static var defaultExecutable: String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/openssl" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/openssl"
    }

    /// Verifies `token` (a DER TimeStampResp file) against `data` (the checkpoint file); throws
    /// ``WitnessError/rejected(witness:reason:)`` with OpenSSL's words when it does not verify.
    public func verify(data: String, token: String) async throws {
        let arguments = ["ts", "-verify", "-in", token, "-data", data, "-CAfile", caFile]
        let executable = self.executable
        try await BlockingLane.waiting.run { try Self.run(executable, arguments, token: token) }
    }

    static func run(_ executable: String, _ arguments: [String], token: String) throws(WitnessError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { throw .rejected(witness: token, reason: "cannot run \(executable): \(error)") }
        let said = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: said, as: UTF8.self)
        guard process.terminationStatus == 0, text.contains("Verification: OK") else {
            let reason = text.split(separator: "\n").filter { !$0.isEmpty }.suffix(2).joined(separator: " / ")
            throw .rejected(witness: token, reason: "openssl ts -verify: \(reason)")
        }
    }
}
