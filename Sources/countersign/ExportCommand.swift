import ArgumentParser
import Cryptography
import Foundation
import Postgres
import ProofService
import ProofStore

/// `countersign export --since --until -o FILE.zip`: the same bundle as `GET /v1/exports/proofs`,
/// read straight from the database and signed with the service's checkpoint key.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the proofs received in a period as a signed ZIP bundle (or NDJSON / CSV).",
        discussion: """
            Periods are [since, until) on the server's received time, as RFC 3339 with an offset or a date (YYYY-MM-DD, UTC).
            The key is CHECKPOINT_KEY_FILE, the file `serve` signs with; export never generates one (without it, it fails).
            Check the result with `countersign verify FILE.zip --public-key <hex>`.
            With --archive (retention, docs/audit.md): once the bundle is written, a `proofs_archived` audit event
            records the period and the bundle's SHA-256, so verification accepts those proofs once they are dropped.
            With --without-points each proof's raw dynamics (points, ink: biometric data) are left out; the bundle
            still verifies, its manifest says so, and --archive refuses it (an archive must keep all the evidence).
            """
    )

    @Option(help: "Start of the period (inclusive).") var since: String?
    @Option(help: "End of the period (exclusive).") var until: String?
    @Option(help: "zip, ndjson or csv.") var format: String = "zip"
    @Option(name: .shortAndLong, help: "Output file.") var output: String
    @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?
    @Flag(help: "Record the bundle in the audit log as the archive of the period (retention); needs --since, --until and zip.")
    var archive = false
    @Flag(name: .customLong("without-points"), help: "Leave each proof's raw dynamics (points, ink) out of the zip bundle.")
    var withoutPoints = false

    func validate() throws {
        if ProofExporter.Format(rawValue: format) == nil { throw ValidationError("--format: zip, ndjson or csv") }
        if archive, since == nil || until == nil || format != ProofExporter.Format.zip.rawValue {
            throw ValidationError("--archive needs --since, --until and the zip format")
        }
        if withoutPoints, format != ProofExporter.Format.zip.rawValue {
            throw ValidationError("--without-points is for the zip format (ndjson and csv never hold the points)")
        }
        if withoutPoints, archive {
            throw ValidationError("--archive keeps every file of the proofs it archives: drop --without-points")
        }
        _ = try Self.date(since, "--since")
        _ = try Self.date(until, "--until")
    }

    func run() async throws {
        let environment = try ServiceConfiguration.fromEnvironment()
        // Never a generated key: a bundle signed by a key nobody pins is worth nothing (issue 19).
        let key = try CheckpointKeyProvider(signingOffline: environment).key()
        let database = PostgresClient(configuration: .forCommand(url: databaseURL ?? environment.databaseURL, poolSize: 2))
        let temporary = output + ".partial"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let file = FileHandle(forWritingAtPath: temporary) else {
            throw ValidationError("cannot write \(temporary)")
        }
        let progress = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        // Rendering, checksums and deflate run on the pool's threads, one per core.
        let work = CPUWorkPool(queueLimit: 4 * CPUWorkPool.cores + 4, perKeyLimit: 4 * CPUWorkPool.cores + 4)
        do {
            let (sinceDate, untilDate) = (try Self.date(since, "--since"), try Self.date(until, "--until"))
            var bundleHash = SHA256Hasher()  // of the bytes as written, for --archive only (a pass over every byte)
            let summary = try await ProofExporter(database: database, key: key, dataKeys: DataKeyProvider(readingOnly: environment), work: work).export(
                format: ProofExporter.Format(rawValue: format)!, since: sinceDate, until: untilDate,
                contents: withoutPoints ? .withoutPoints : .everything,
                progress: { done, total in progress.show(done, total) },
                sink: { chunk in
                    if archive { bundleHash.update(chunk) }
                    try file.write(contentsOf: chunk)
                })
            try file.synchronize()
            try file.close()
            progress.finish()
            if FileManager.default.fileExists(atPath: output) { try FileManager.default.removeItem(atPath: output) }
            try FileManager.default.moveItem(atPath: temporary, toPath: output)
            if archive, let sinceDate, let untilDate {
                let digest = bundleHash.finalize().hexString
                let event = try await Self.recordArchive(since: sinceDate, until: untilDate, bundleSHA256: digest, proofs: summary.proofs,
                                                         in: database)
                print("archived: audit event \(event.seq) (chain \(event.chain)) records \(output), SHA-256 \(digest)")
            }
            await database.shutdown()
            var line = "exported \(summary.proofs) proofs, \(summary.bytes) bytes to \(output)"
            if let checkpoint = summary.checkpoint {
                line += "; audit checkpoint of \(checkpoint.heads.count) chains, newest seq \(checkpoint.seq); signer \(checkpoint.keyID) (\(checkpoint.publicKey.hexString))"
            }
            print(line)
        } catch {
            try? file.close()
            try? FileManager.default.removeItem(atPath: temporary)
            await database.shutdown()
            progress.finish()
            throw error
        }
    }

    /// Appends the `proofs_archived` event for `[since, until)` as the command line.
    static func recordArchive(since: Date, until: Date, bundleSHA256: String, proofs: Int,
                              in database: PostgresClient) async throws -> AuditEvent {
        let (sinceText, untilText) = (RFC3339Timestamp.format(since), RFC3339Timestamp.format(until))
        return try await database.withTransaction(retryingStalePlans: true) { session in
            try await AuditLog.append(.proofsArchived, subject: "archive:\(sinceText)/\(untilText)",
                                      details: ["since": sinceText, "until": untilText, "bundle_sha256": bundleSHA256,
                                                "proof_count": String(proofs)], origin: .cli, in: session)
        }
    }

    /// RFC 3339 with an offset, or a bare date taken as midnight UTC.
    static func date(_ text: String?, _ option: String) throws -> Date? {
        guard let text else { return nil }
        if let timestamp = try? RFC3339Timestamp(parsing: text) { return timestamp.date }
        if text.utf8.count == 10, let timestamp = try? RFC3339Timestamp(parsing: text + "T00:00:00Z") { return timestamp.date }
        throw ValidationError("\(option): RFC 3339 with an offset (2025-03-01T00:00:00Z) or a date (2025-03-01)")
    }
}

/// A one-line progress bar on standard error, redrawn at most every percent.
final class ProgressBar {
    let enabled: Bool
    private var lastPercent = -1

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func show(_ done: Int, _ total: Int) {
        guard enabled, total > 0 else { return }
        let percent = done * 100 / total
        guard percent != lastPercent else { return }
        lastPercent = percent
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) proofs".utf8))
    }

    func finish() {
        if enabled, lastPercent >= 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
