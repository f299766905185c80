import Archive
import Cryptography
import Foundation
import ProofStore

/// Checks an export bundle offline (`countersign verify FILE.zip`): that its signer is one of the
/// trusted keys (when any are given; else the key the bundle carries is taken on trust — the CLI
/// allows that only with `--trust-embedded-key`), the manifest's Ed25519 signature, the
/// checkpoint's signature and key id; then, for a version 3 bundle, that the audit chain segments
/// re-hash to the checkpoint's heads (``BundleAuditIndex``) and that every proof's files, metadata
/// and audit event agree and every file is in the signed checksums (``BundleProofScan``); for a
/// version 1 or 2 bundle, every file's SHA-256 and size against the manifest
/// (``LegacyBundleCheck``). Reads the archive through its central directory, one entry at a time
/// (``ZipArchiveReader/forEachEntry(_:)``), a batch of entries at a time on all cores, and keeps
/// its index of audit events in a temporary file (``BundleEventTable``): memory is bounded by the
/// largest entry and one batch, whatever the number of proofs. Reports every failure, each naming
/// the file.
public enum ExportBundleVerifier {
    /// One problem, naming the file it concerns.
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        /// The path inside the bundle (or the bundle itself: `bundle`).
        public var file: String
        /// What is wrong.
        public var reason: String

        public var description: String { "\(file): \(reason)" }
    }

    /// The outcome.
    public struct Report: Sendable, Equatable {
        /// Files whose SHA-256 matched the manifest.
        public var verifiedFiles: Int
        /// Proofs the manifest says the bundle holds.
        public var proofCount: Int
        /// The audit checkpoint the manifest carries: its seq (version 2: the highest head seq).
        public var checkpointSeq: Int64?
        /// Version 1 checkpoints: the head hash.
        public var checkpointHeadHash: String?
        /// The checkpoint's version (1: one chain, 2: every chain).
        public var checkpointVersion: Int?
        /// Version 2 checkpoints: the heads of the chains, by ascending chain.
        public var checkpointHeads: [AuditChainHead] = []
        /// The key that signed the manifest, as hex.
        public var publicKey: String?
        /// Its key id (`ed25519:` + 16 hex digits).
        public var keyID: String?
        /// True when the signer was checked against trusted keys (false: the bundle's own key was taken on trust).
        public var signerPinned = false
        /// The first ``failureLimit`` problems found, in the order found; empty means valid.
        public private(set) var failures: [Failure]
        /// Problems found past ``failureLimit``: counted, not kept. A damaged or forged bundle can
        /// fail millions of times (every event of a broken chain), and keeping every message made
        /// the verifier's memory grow with the bundle (1.1 GB for 474,325 proofs).
        public private(set) var omittedFailures = 0
        /// Problems kept in ``failures``.
        public static let failureLimit = 1000
        /// The bundle's format tag (`countersign.export/v3`, or v1/v2 for older bundles).
        public var format: String?
        /// Version 3: proofs whose files, metadata and audit event were checked.
        public var verifiedProofs = 0
        /// Version 3: audit events re-hashed up to the checkpoint's heads.
        public var auditEvents = 0
        /// Version 3: what the bundle holds of each proof, as its signed manifest says (the raw
        /// dynamics may be left out; their digests are still checked against the audit events).
        public var contents: ExportContents = .everything

        /// True when nothing failed.
        public var isValid: Bool { failures.isEmpty }

        /// True when ``failureLimit`` failures are kept: further ones are only counted, so a caller
        /// can skip the work of describing them.
        public var isFull: Bool { failures.count >= Self.failureLimit }

        public init(verifiedFiles: Int, proofCount: Int, failures: [Failure] = []) {
            self.verifiedFiles = verifiedFiles
            self.proofCount = proofCount
            self.failures = []
            add(contentsOf: failures)
        }

        /// Records `failure` (kept while fewer than ``failureLimit`` are, else counted).
        public mutating func add(_ failure: Failure) {
            if failures.count < Self.failureLimit { failures.append(failure) } else { omittedFailures += 1 }
        }

        public mutating func add(contentsOf failures: [Failure]) {
            for failure in failures { add(failure) }
        }
    }

    /// Largest `manifest.json`, `manifest.sig` or `public_key.pem` read: the manifest lists one
    /// checksums file per thousand files (a million proofs: under a megabyte), and is decoded whole.
    static let trailerLimit = 32 << 20

    /// Verifies the bundle `bytes`; `trustedKey` pins the signer (recommended: the key from
    /// `GET /v1/audit/checkpoint`, obtained separately); nil takes the bundle's own key on trust.
    public static func verify(_ bytes: [UInt8], trustedKey: Ed25519PublicKey? = nil) -> Report {
        var trusted = TrustedKeys()
        if let trustedKey { trusted.add(trustedKey) }
        return verify(bytes, trusting: trusted)
    }

    /// Verifies the bundle `bytes` signed by one of `trusted` (several: key rotation); an empty set
    /// takes the bundle's own key on trust (integrity only, not who signed).
    public static func verify(_ bytes: [UInt8], trusting trusted: TrustedKeys) -> Report {
        verify(source: ZipBytes(bytes), trusting: trusted)
    }

    /// Verifies the bundle in the file at `path` (throws only when it cannot be opened).
    public static func verify(file path: String, trusting trusted: TrustedKeys) throws -> Report {
        verify(source: try ZipFile(path: path), trusting: trusted)
    }

    /// Verifies the bundle read from `source` (``ZipFile`` for a bundle on disk), signed by one of `trusted`.
    public static func verify(source: any ZipSource, trusting trusted: TrustedKeys) -> Report {
        var report = Report(verifiedFiles: 0, proofCount: 0, failures: [])
        report.signerPinned = !trusted.isEmpty
        func fail(_ file: String, _ reason: String) { report.add(Failure(file: file, reason: reason)) }
        let archive: ZipArchiveReader
        var trailer: [String: ZipArchiveReader.Entry] = [:]
        var audit: [(name: String, entry: ZipArchiveReader.Entry)] = []
        do {
            archive = try ZipArchiveReader(source: source)
            // First pass: only the few entries read before the proofs (the trailer and the audit
            // segments); the proofs' and checksums' names are not even decoded.
            try archive.forEachEntry(skipping: [Array(BundleLayout.deliveriesPrefix.utf8), Array(BundleLayout.checksumsPrefix.utf8)]) { entry in
                if BundleLayout.trailer.contains(entry.name) {
                    if trailer[entry.name] != nil { fail(entry.name, "appears twice in the archive") }
                    trailer[entry.name] = entry
                } else if entry.name.hasPrefix(BundleLayout.auditPrefix) {
                    // Listed in memory (sorted before reading): a forged bundle of millions of
                    // empty segment files is refused past the most a bundle can need.
                    if audit.count < BundleAuditIndex.segmentFileLimit {
                        audit.append((entry.name, entry))
                    } else {
                        fail(entry.name, "is past the \(BundleAuditIndex.segmentFileLimit) audit segment files a bundle can hold; not read")
                    }
                }
            }
        } catch {
            fail("bundle", error.message)
            return report
        }
        func read(_ name: String) -> [UInt8]? {
            guard let entry = trailer[name] else {
                fail(name, "missing from the bundle")
                return nil
            }
            do {
                return try archive.contents(of: entry, limit: Self.trailerLimit)
            } catch {
                fail(name, error.message)
                return nil
            }
        }
        guard let manifestBytes = read("manifest.json") else { return report }
        let signature = read("manifest.sig")
        var signer: Ed25519PublicKey?
        if let pem = read("public_key.pem") {
            do {
                signer = try Ed25519PublicKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
            } catch {
                fail("public_key.pem", "not an Ed25519 public key (\(error.message))")
            }
        }
        // Pinned: the signer must be trusted, and the signature is checked with the trusted key (the
        // bundle's own, or — when its public_key.pem is unreadable — each trusted key in turn).
        var verifyingKey = signer
        if !trusted.isEmpty {
            if let signer, !trusted.contains(raw: signer.rawRepresentation) {
                fail("public_key.pem", "the bundle is signed by key \(signer.keyID) (\(signer.rawRepresentation.hexString)), "
                     + "which is not trusted (trusted: \(trusted.keyIDs.joined(separator: ", ")))")
                verifyingKey = nil
            } else if signer == nil {
                verifyingKey = trusted.keys.first { key in signature.map { key.isValidSignature($0, for: manifestBytes) } ?? false }
                    ?? trusted.keys.first
            }
        }
        report.publicKey = (verifyingKey ?? signer)?.rawRepresentation.hexString
        report.keyID = (verifyingKey ?? signer)?.keyID
        if let signature, let verifyingKey, !verifyingKey.isValidSignature(signature, for: manifestBytes) {
            fail("manifest.json", "its Ed25519 signature in manifest.sig does not verify with key \(verifyingKey.keyID) ("
                 + verifyingKey.rawRepresentation.hexString + "): manifest.json or manifest.sig was changed, or the key is wrong")
        }
        let manifest: ExportManifest
        do {
            manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(manifestBytes))
        } catch {
            fail("manifest.json", "not a countersign export manifest (\(error))")
            return report
        }
        report.format = manifest.format
        report.proofCount = manifest.proofCount
        report.checkpointSeq = manifest.checkpoint.seq
        report.checkpointHeadHash = manifest.checkpoint.headHash
        report.checkpointVersion = manifest.checkpoint.version
        if !ExportManifest.knownFormats.contains(manifest.format) { fail("manifest.json", "unknown format \(manifest.format)") }
        let checkpoint = manifest.checkpoint.checkpoint
        if let checkpoint {
            report.checkpointHeads = checkpoint.heads
            if !checkpoint.hasValidSignature { fail("manifest.json", "the audit checkpoint's signature does not verify") }
            if let expected = verifyingKey ?? signer, checkpoint.publicKey != expected.rawRepresentation {
                fail("manifest.json", "the audit checkpoint is signed by key \(checkpoint.keyID), not by the bundle's signer \(expected.keyID)")
            }
            if !manifest.checkpoint.keyIDMatches {
                fail("manifest.json", "the audit checkpoint's key_id \(manifest.checkpoint.keyID ?? "") is not its public_key's \(checkpoint.keyID)")
            }
        } else {
            fail("manifest.json", "the audit checkpoint is malformed")
        }
        if ExportManifest.legacyFormats.contains(manifest.format) {
            LegacyBundleCheck.check(archive, manifest: manifest, report: &report)
            return report
        }
        guard let checkpoint, checkpoint.version == 2, let checksums = manifest.checksums else {
            fail("manifest.json", "a version 3 bundle needs a version 2 checkpoint and its checksums list")
            return report
        }
        guard let contents = ExportContents(proofFiles: manifest.proofFiles) else {
            fail("manifest.json", "proof_files \(manifest.proofFiles ?? []) is not what an export holds of a proof: every file, or all but "
                 + ExportContents.omissibleFiles.sorted().joined(separator: " and "))
            return report
        }
        report.contents = contents
        var index = BundleAuditIndex.build(archive, segments: audit.sorted { $0.name < $1.name }, heads: checkpoint.heads, report: &report)
        BundleProofScan.scan(archive, checksums: checksums, omitted: contents.omittedFiles, events: &index, report: &report)
        if let failure = index.failure { fail("bundle", failure.description) }
        if report.verifiedProofs != manifest.proofCount {
            fail("manifest.json", "states \(manifest.proofCount) proofs, but the bundle holds \(report.verifiedProofs)")
        }
        return report
    }
}
