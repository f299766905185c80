import ArgumentParser
import Foundation
import Postgres
import ProofAPI
import ProofStore

/// `countersign verify --database`: walk the audit chain in the database, recompute every hash and
/// re-hash every recorded proof. Exits 0 when the record is intact, 1 at the first break.
///
/// Offline verification of an export bundle (`countersign verify FILE.zip`) is not built yet.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the audit chain and the proofs it vouches for (exit 0 intact, 1 broken).",
        discussion: "With --database, reads the chain from PostgreSQL in pages of 1,000 events (constant memory)."
    )

    @Flag(help: "Verify the live database (the only mode so far).") var database = false
    @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?
    @Flag(help: "Print the result as JSON (the body of GET /v1/audit/verify).") var json = false
    @Argument(help: "An export bundle to verify offline (not supported yet).") var bundle: String?

    func validate() throws {
        if bundle != nil { throw ValidationError("verifying an export bundle offline is not supported yet; use --database") }
        if !database { throw ValidationError("say what to verify: --database") }
    }

    func run() async throws {
        let environment = try ServiceConfiguration.fromEnvironment()
        let client = PostgresClient(configuration: PostgresConfiguration(url: databaseURL ?? environment.databaseURL, poolSize: 1))
        let result: AuditVerification
        do {
            result = try await AuditVerifier(database: client).verify()
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
        print(json ? try Self.json(result) : Self.describe(result))
        if case .broken = result { throw ExitCode(1) }
    }

    /// One human line: `audit chain ok: N events, head <hex>` or where and how it breaks.
    static func describe(_ result: AuditVerification) -> String {
        switch result {
        case .ok(let count, let headHash):
            return "audit chain ok: \(count) events, head \(headHash.hexString)"
        case .broken(let failure):
            var line = "audit chain BROKEN at seq \(failure.seq): \(failure.kind.rawValue) (expected \(failure.expected), found \(failure.found))"
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
