import Archive
import Cryptography
import Foundation
import ProofStore

/// Checks an export bundle offline (`countersign verify FILE.zip`): that its signer is one of the
/// trusted keys (when any are given; else the key the bundle carries is taken on trust — the CLI
/// allows that only with `--trust-embedded-key`), the manifest's Ed25519 signature, the
/// checkpoint's signature and key id, and every file's SHA-256 and size against the manifest.
/// Reports every failure, each naming the file.
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
        /// Every problem found; empty means valid.
        public var failures: [Failure]

        /// True when nothing failed.
        public var isValid: Bool { failures.isEmpty }
    }

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
        var report = Report(verifiedFiles: 0, proofCount: 0, failures: [])
        report.signerPinned = !trusted.isEmpty
        func fail(_ file: String, _ reason: String) { report.failures.append(Failure(file: file, reason: reason)) }
        let archive: ZipArchiveReader
        do {
            archive = try ZipArchiveReader(bytes)
        } catch {
            fail("bundle", error.message)
            return report
        }
        var entries: [String: ZipArchiveReader.Entry] = [:]
        for entry in archive.entries {
            if entries[entry.name] != nil { fail(entry.name, "appears twice in the archive") }
            entries[entry.name] = entry
        }
        func read(_ name: String) -> [UInt8]? {
            guard let entry = entries[name] else {
                fail(name, "missing from the bundle")
                return nil
            }
            do {
                return try archive.contents(of: entry)
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
        report.proofCount = manifest.proofCount
        report.checkpointSeq = manifest.checkpoint.seq
        report.checkpointHeadHash = manifest.checkpoint.headHash
        report.checkpointVersion = manifest.checkpoint.version
        if !ExportManifest.knownFormats.contains(manifest.format) { fail("manifest.json", "unknown format \(manifest.format)") }
        if let checkpoint = manifest.checkpoint.checkpoint {
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
        var listed = Set<String>()
        for file in manifest.files {
            listed.insert(file.path)
            guard let contents = read(file.path) else { continue }
            let digest = SHA256.hex(contents)
            if contents.count != file.bytes || digest != file.sha256 {
                fail(file.path, "SHA-256 \(digest) (\(contents.count) bytes) differs from the manifest's \(file.sha256) (\(file.bytes) bytes)")
            } else {
                report.verifiedFiles += 1
            }
        }
        for name in entries.keys.sorted() where !listed.contains(name) && !["manifest.json", "manifest.sig", "public_key.pem"].contains(name) {
            fail(name, "is not listed in the manifest")
        }
        return report
    }
}
