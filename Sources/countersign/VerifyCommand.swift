import ArgumentParser
import Cryptography
import Foundation
import Postgres
import ProofService
import ProofStore

/// `countersign verify --database` walks the audit chains in the database, recomputes every hash,
/// re-hashes every recorded proof and checks the stored signed checkpoints; `countersign verify
/// FILE.zip` checks an export bundle offline (manifest signature, checkpoint, every file's SHA-256).
/// Exit 0 when intact or valid, 1 when not.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the audit chain (--database) or an export bundle (FILE.zip); exit 0 valid, 1 invalid.",
        discussion: """
            With --database, reads the chain from PostgreSQL in pages of 1,000 events (constant memory).
            With FILE.zip, works offline: pin the signer with --public-key (the public_key of GET /v1/audit/checkpoint,
            as 64 hex digits or a PEM file) so a bundle re-signed with another key fails.
            """
    )

    @Flag(help: "Verify the live database.") var database = false
    @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?
    @Option(name: .customLong("public-key"), help: "The trusted Ed25519 public key: 64 hex digits or a PEM file.") var publicKey: String?
    @Flag(help: "Print the result as JSON.") var json = false
    @Argument(help: "An export bundle (.zip) to verify offline.") var bundle: String?

    func validate() throws {
        if database == (bundle != nil) { throw ValidationError("say what to verify: --database, or an export bundle FILE.zip") }
    }

    func run() async throws {
        let trusted = try publicKey.map(Self.trustedKey)
        if let bundle {
            try verifyBundle(bundle, trusted: trusted)
            return
        }
        let environment = try ServiceConfiguration.fromEnvironment()
        let client = PostgresClient(configuration: PostgresConfiguration(url: databaseURL ?? environment.databaseURL, poolSize: 1))
        let result: AuditVerification
        do {
            result = try await AuditVerifier(database: client).verify(trustedPublicKeys: trusted.map { [$0] } ?? [])
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
        print(json ? try Self.json(result) : Self.describe(result))
        if case .broken = result { throw ExitCode(1) }
    }

    func verifyBundle(_ path: String, trusted: Ed25519PublicKey?) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read \(path)")
        }
        let report = ExportBundleVerifier.verify(Array(data), trustedKey: trusted)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(BundleReportJSON(report)), as: UTF8.self))
        } else if report.isValid {
            let checkpoint = report.checkpointVersion == 1
                ? "audit checkpoint v1 seq \(report.checkpointSeq ?? 0) head \(report.checkpointHeadHash ?? "?")"
                : "audit checkpoint v2 of \(report.checkpointHeads.count) chains, newest seq \(report.checkpointSeq ?? 0)"
            print("bundle valid: \(report.verifiedFiles) files, \(report.proofCount) proofs, signed by \(report.publicKey ?? "?"), "
                  + checkpoint + (trusted == nil ? " (signer not pinned: pass --public-key to check who signed it)" : ""))
        } else {
            for failure in report.failures { print("INVALID \(failure.file): \(failure.reason)") }
        }
        if !report.isValid { throw ExitCode(1) }
    }

    /// A key from 64 hex digits or a PEM file.
    static func trustedKey(_ text: String) throws -> Ed25519PublicKey {
        if let raw = Hex.decode(text), raw.count == 32 { return try Ed25519PublicKey(rawRepresentation: raw) }
        guard let pem = FileManager.default.contents(atPath: text) else {
            throw ValidationError("--public-key: neither 64 hex digits nor a readable PEM file: \(text)")
        }
        return try Ed25519PublicKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
    }

    /// One human line: `audit chains ok: N events in C chains, newest seq S` or where and how it
    /// breaks (`--json` lists every chain's head).
    static func describe(_ result: AuditVerification) -> String {
        switch result {
        case .ok(let count, let heads, let archived):
            return "audit chains ok: \(count) events in \(heads.count) chains, newest seq \(heads.map(\.seq).max() ?? 0)"
                + (archived > 0 ? "; \(archived) recorded proofs archived (gone from the database: check the bundles the proofs_archived events name)" : "")
        case .broken(let failure):
            var line = "audit chain BROKEN at seq \(failure.seq)" + (failure.chain.map { " (chain \($0))" } ?? "")
                + ": \(failure.kind.rawValue) (expected \(failure.expected), found \(failure.found))"
            if let subject = failure.subject { line += " subject \(subject)" }
            if let proof = failure.proofID { line += " proof \(proof)" }
            return line
        }
    }

    static func json(_ result: AuditVerification) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(AuditVerificationResource(result)), as: UTF8.self)
    }
}

/// `verify FILE.zip --json`: `{"status":"valid"|"invalid","files":N,"proofs":N,"public_key","checkpoint_seq",
/// "checkpoint_version","failures":[{"file","reason"}]}`.
struct BundleReportJSON: Encodable {
    struct Failure: Encodable {
        var file: String
        var reason: String
    }

    var status: String
    var files: Int
    var proofs: Int
    var publicKey: String?
    var checkpointSeq: Int64?
    var checkpointVersion: Int?
    var failures: [Failure]

    enum CodingKeys: String, CodingKey {
        case status, files, proofs, failures
        case publicKey = "public_key", checkpointSeq = "checkpoint_seq", checkpointVersion = "checkpoint_version"
    }

    init(_ report: ExportBundleVerifier.Report) {
        status = report.isValid ? "valid" : "invalid"
        files = report.verifiedFiles
        proofs = report.proofCount
        publicKey = report.publicKey
        checkpointSeq = report.checkpointSeq
        checkpointVersion = report.checkpointVersion
        failures = report.failures.map { Failure(file: $0.file, reason: $0.reason) }
    }
}
