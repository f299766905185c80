import ArgumentParser
import Cryptography
import Foundation
import Postgres
import ProofService
import ProofStore

/// `countersign verify --database` walks the audit chains in the database, recomputes every hash,
/// re-hashes every recorded proof and checks the stored signed checkpoints; `countersign verify
/// FILE.zip` checks an export bundle offline (manifest signature, checkpoint, every file's SHA-256).
/// Both need the signer pinned (``TrustedKeys``) or `--trust-embedded-key`. Exit 0 when intact or
/// valid, 1 when not, 2 when nothing is pinned.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the audit chain (--database) or an export bundle (FILE.zip); exit 0 valid, 1 invalid, 2 signer not pinned.",
        discussion: """
            With --database, reads the chain from PostgreSQL in pages of 5,000 events (constant memory), hashing on every core; every stored
            checkpoint must be signed by a trusted key. With FILE.zip, works offline; the bundle must be signed by a trusted key.
            Trusted keys (the public_key or key_id of GET /v1/audit/checkpoint, obtained separately; several for rotation):
            --public-key (repeatable), --trusted-keys FILE, and COUNTERSIGN_TRUSTED_KEYS (comma-separated hex), all together.
            Without any, verify refuses (exit 2) unless --trust-embedded-key: then the signatures are checked with the keys
            the bundle or the checkpoints carry, which proves integrity but not who signed.
            --checkpoints DIR (with --database): also check every checkpoint in the witness directory DIR (CHECKPOINT_WITNESS_DIR):
            signed by a trusted key, its heads in the recomputed chains, still in the database; reports the unwitnessed window.
            --tsa-ca CA.pem (with --checkpoints): every RFC 3161 token (FILE.tsr beside FILE.json) must verify with openssl ts -verify.
            --from-checkpoint (with --checkpoints): trust history up to the newest witnessed checkpoint (once its heads are found)
            and walk only the events after it, so a daily run costs the day's events; run without it now and then.
            """
    )

    @Flag(help: "Verify the live database.") var database = false
    @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?
    @Option(name: .customLong("public-key"), help: "A trusted Ed25519 public key: 64 hex digits or a PEM file (repeatable).")
    var publicKeys: [String] = []
    @Option(name: .customLong("trusted-keys"), help: "A file of trusted keys: per line 64 hex digits or a PEM file's path, or PEM blocks; # comments.")
    var trustedKeyFiles: [String] = []
    @Flag(help: "Pin nothing: check signatures with the keys the bundle or checkpoints carry (integrity only; says so loudly).")
    var trustEmbeddedKey = false
    @Option(name: .customLong("checkpoints"), help: "A witness directory: check the database against every checkpoint in it.")
    var checkpointsDirectory: String?
    @Option(name: .customLong("tsa-ca"), help: "With --checkpoints: the TSA's CA certificate (PEM); every RFC 3161 token beside a witness file must verify.")
    var tsaCA: String?
    @Flag(name: .customLong("from-checkpoint"), help: "With --checkpoints: walk only the events after the newest witnessed checkpoint.")
    var fromCheckpoint = false
    @Flag(help: "Print the result as JSON.") var json = false
    @Argument(help: "An export bundle (.zip) to verify offline.") var bundle: String?

    func validate() throws {
        if database == (bundle != nil) { throw ValidationError("say what to verify: --database, or an export bundle FILE.zip") }
        if checkpointsDirectory != nil, !database { throw ValidationError("--checkpoints goes with --database") }
        if fromCheckpoint, checkpointsDirectory == nil { throw ValidationError("--from-checkpoint needs --checkpoints DIR") }
        if tsaCA != nil, checkpointsDirectory == nil { throw ValidationError("--tsa-ca needs --checkpoints DIR") }
    }

    func run() async throws {
        let trusted = try trustedKeys(environment: ProcessInfo.processInfo.environment)
        if let bundle {
            try verifyBundle(bundle, trusted: trusted)
            return
        }
        let witnessed: [WitnessedCheckpoint]
        do {
            witnessed = try checkpointsDirectory.map { try WitnessDirectory(path: $0).files().map { WitnessedCheckpoint(name: $0.name, checkpoint: $0.checkpoint) } } ?? []
        } catch {
            print("witness directory unusable: \(error)")
            throw ExitCode(1)
        }
        if checkpointsDirectory != nil, witnessed.isEmpty {
            FileHandle.standardError.write(Data("countersign verify: no witnessed checkpoint in \(checkpointsDirectory ?? "")\n".utf8))
        }
        var timestamped: Int?
        if let tsaCA, let checkpointsDirectory {
            let checked = await Self.checkTimestamps(witnessed, in: checkpointsDirectory, verifier: TimestampVerifier(caFile: tsaCA))
            timestamped = checked.verified
            if let failure = checked.failure {
                let report = AuditVerificationReport(result: .broken(failure), witnessedChecked: witnessed.count)
                print(json ? try Self.json(report, witnesses: true) : Self.describe(report.result) + Self.describeErased(report))
                throw ExitCode(1)
            }
        }
        let environment = try ServiceConfiguration.fromEnvironment()
        // The walk's own connection and the others reading proofs in its snapshot.
        let client = PostgresClient(configuration: .forCommand(url: databaseURL ?? environment.databaseURL, poolSize: Self.proofReaders))
        var report: AuditVerificationReport
        do {
            // Sealed proofs are opened with DATA_KEY_FILE (or the development file of DATA_KEY_GENERATE), on every core.
            let verifier = AuditVerifier(database: client, dataKeys: DataKeyProvider(readingOnly: environment), pageSize: Self.pageSize,
                                         proofReaders: Self.proofReaders, hashing: VerificationHashing.offloaded(slices: CPUWorkPool.cores),
                                         offload: CPUPoolOffload())
            report = try await verifier.verify(trustedPublicKeys: trusted.keys, witnessed: witnessed,
                                                                      incremental: fromCheckpoint)
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
        report.timestamped = timestamped
        let withWitnesses = checkpointsDirectory != nil
        print(json ? try Self.json(report, witnesses: withWitnesses) : Self.describe(report.result) + Self.describeErased(report) + (withWitnesses ? "\n" + Self.describeWitnesses(report) : ""))
        if trusted.isEmpty {
            Self.warn("stored checkpoints were checked with the keys they carry, not against trusted keys: "
                      + "a checkpoint signed by anyone's key passed")
        }
        if case .broken = report.result { throw ExitCode(1) }
    }

    /// Connections reading proofs at once, whatever the cores: a proof is found by a random UUID in
    /// two primary keys, and once a database outgrows memory each lookup waits for a page read, so
    /// more readers keep more reads in flight (figures: BENCHMARKS.md, "Audit verification").
    static let proofReaders = 8

    /// Events read per round trip: large enough that round trips are a small part of the time, small
    /// enough to keep memory constant (a few MB per page, two pages at once).
    static let pageSize = 5_000

    /// The keys of `--public-key`, `--trusted-keys` and COUNTERSIGN_TRUSTED_KEYS. None: exit 2 with one
    /// line saying how to pin, unless `--trust-embedded-key`.
    func trustedKeys(environment: [String: String]) throws -> TrustedKeys {
        var trusted = TrustedKeys()
        do {
            for key in publicKeys { try trusted.add(key, origin: "--public-key") }
            for file in trustedKeyFiles { try trusted.addFile(file) }
            if let value = environment[TrustedKeys.environmentVariable] { try trusted.addEnvironment(value) }
        } catch {
            throw ValidationError("\(error)")
        }
        if !trusted.isEmpty, trustEmbeddedKey {
            throw ValidationError("--trust-embedded-key contradicts the trusted keys given (\(trusted.keyIDs.joined(separator: ", ")))")
        }
        if trusted.isEmpty, !trustEmbeddedKey {
            FileHandle.standardError.write(Data(("countersign verify: the signer is not pinned: pass --public-key HEX|PEMFILE (repeatable), "
                + "--trusted-keys FILE or \(TrustedKeys.environmentVariable)=HEX,HEX (the public_key of GET /v1/audit/checkpoint), "
                + "or --trust-embedded-key to check integrity only\n").utf8))
            throw ExitCode(2)
        }
        return trusted
    }

    /// A warning on standard error that the signer was not checked.
    static func warn(_ what: String) {
        FileHandle.standardError.write(Data("WARNING: SIGNER NOT CHECKED (--trust-embedded-key): \(what)\n".utf8))
    }

    func verifyBundle(_ path: String, trusted: TrustedKeys) throws {
        // Read through the central directory, one entry at a time: never the whole file (issue 23).
        let report: ExportBundleVerifier.Report
        do {
            report = try ExportBundleVerifier.verify(file: path, trusting: trusted)
        } catch {
            throw ValidationError("\(error)")
        }
        if trusted.isEmpty {
            Self.warn("the bundle was checked with its own public_key.pem (key \(report.keyID ?? "?")): "
                      + "this proves it is intact, not who signed it")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(BundleReportJSON(report)), as: UTF8.self))
        } else if report.isValid {
            let checkpoint = report.checkpointVersion == 1
                ? "audit checkpoint v1 seq \(report.checkpointSeq ?? 0) head \(report.checkpointHeadHash ?? "?")"
                : "audit checkpoint v2 of \(report.checkpointHeads.count) chains, newest seq \(report.checkpointSeq ?? 0)"
            let leftOut = report.contents == .withoutPoints ? " (raw dynamics left out by the exporter: their digests checked)" : ""
            let standalone = report.format == ExportManifest.formatTag
                ? "\(report.verifiedProofs) proofs each matching its audit event\(leftOut), \(report.auditEvents) audit events re-hashed to the signed heads, "
                : ""
            print("bundle valid: \(report.verifiedFiles) files, \(report.proofCount) proofs, " + standalone + "signed by \(report.keyID ?? "?") "
                  + "(\(report.publicKey ?? "?")), " + checkpoint
                  + (report.signerPinned ? "; signer trusted" : " (signer NOT checked: --trust-embedded-key)"))
        } else {
            for failure in report.failures { print("INVALID \(failure.file): \(failure.reason)") }
            if report.omittedFailures > 0 { print("INVALID and \(report.omittedFailures) more problems, not listed (the first \(report.failures.count) are)") }
        }
        if !report.isValid { throw ExitCode(1) }
    }

    /// The erased deliveries a sound walk passed, on a line of their own (nothing when none).
    static func describeErased(_ report: AuditVerificationReport) -> String {
        guard case .ok = report.result, !report.erasedDeliveries.isEmpty else { return "" }
        return "\nerased deliveries (their events hold; their personal facts are gone): " + report.erasedDeliveries.joined(separator: ", ")
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

    /// Verifies the token beside each witness file that has one; the count verified, or the first failure.
    static func checkTimestamps(_ witnessed: [WitnessedCheckpoint], in directory: String,
                                verifier: TimestampVerifier) async -> (verified: Int, failure: AuditBreak?) {
        var verified = 0
        for entry in witnessed {
            let token = directory + "/" + WitnessFile.tokenName(for: entry.name)
            guard FileManager.default.fileExists(atPath: token) else { continue }
            do {
                try await verifier.verify(data: directory + "/" + entry.name, token: token)
                verified += 1
            } catch {
                return (verified, AuditBreak(seq: entry.checkpoint.seq, kind: .witnessTimestampInvalid,
                                             expected: "an RFC 3161 token over the file's SHA-256 under \(verifier.caFile)",
                                             found: "\(error)", subject: "witness:\(entry.name)"))
            }
        }
        return (verified, nil)
    }

    /// The witnesses' line: how many were checked, where an incremental run started, and the
    /// unwitnessed window (what no witness vouches for yet).
    static func describeWitnesses(_ report: AuditVerificationReport) -> String {
        var line = "witnessed checkpoints: \(report.witnessedChecked) checked"
        if let start = report.startedAfter { line += "; walked only the events after \(start)" }
        if let timestamped = report.timestamped { line += "; \(timestamped) with a verified RFC 3161 token" }
        if let window = report.window {
            line += "; unwitnessed window: \(window.events) events, \(Int(window.seconds.rounded())) s since \(window.since)"
        } else {
            line += "; no witnessed checkpoint: every event is unwitnessed"
        }
        return line
    }

    static func json(_ report: AuditVerificationReport, witnesses: Bool) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let resource = witnesses ? AuditVerificationResource(report: report) : AuditVerificationResource(report.result)
        return String(decoding: try encoder.encode(resource), as: UTF8.self)
    }
}

/// `verify FILE.zip --json`: `{"status":"valid"|"invalid","files":N,"proofs":N,"public_key","key_id","signer_pinned",
/// "checkpoint_seq","checkpoint_version","failures":[{"file","reason"}],"omitted_failures":N}` (the first 1,000
/// failures are listed, the rest counted).
struct BundleReportJSON: Encodable {
    struct Failure: Encodable {
        var file: String
        var reason: String
    }

    var status: String
    var files: Int
    var proofs: Int
    var publicKey: String?
    var keyID: String?
    var signerPinned: Bool
    var checkpointSeq: Int64?
    var checkpointVersion: Int?
    var failures: [Failure]
    var omittedFailures: Int
    /// `everything` or `without_points` (version 3 bundles; the manifest's `proof_files`).
    var contents: String

    enum CodingKeys: String, CodingKey {
        case status, files, proofs, failures, contents, omittedFailures = "omitted_failures"
        case publicKey = "public_key", keyID = "key_id", signerPinned = "signer_pinned", checkpointSeq = "checkpoint_seq", checkpointVersion = "checkpoint_version"
    }

    init(_ report: ExportBundleVerifier.Report) {
        status = report.isValid ? "valid" : "invalid"
        files = report.verifiedFiles
        proofs = report.proofCount
        publicKey = report.publicKey
        keyID = report.keyID
        signerPinned = report.signerPinned
        checkpointSeq = report.checkpointSeq
        checkpointVersion = report.checkpointVersion
        contents = report.contents.rawValue
        failures = report.failures.map { Failure(file: $0.file, reason: $0.reason) }
        omittedFailures = report.omittedFailures
    }
}
