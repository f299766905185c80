import Archive
import Cryptography
import Foundation
import HummingbirdTesting
import ProofService
import ProofStore
import Testing
import TestSupport

/// Issue 19, "Key custody", below the command line: no generated key unless allowed, key ids,
/// several trusted keys.
@Suite("Key custody")
struct KeyCustodyTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("custody-\(UInt64.random(in: 0...UInt64.max))")
    }

    @Test("no key file and no CHECKPOINT_KEY_GENERATE: no key, one message naming both, nothing written")
    func unconfigured() throws {
        let data = Self.folder()
        defer { try? FileManager.default.removeItem(at: data) }
        let configuration = try ServiceConfiguration.fromEnvironment(["DATA_DIR": data.path])
        #expect(!configuration.generateCheckpointKey)
        let error = try #require(throws: CheckpointKeyError.self) { try CheckpointKeyProvider(configuration: configuration).key() }
        #expect(error.description.contains("CHECKPOINT_KEY_FILE") && error.description.contains("CHECKPOINT_KEY_GENERATE=true"))
        #expect(!error.description.contains("\n"))
        #expect(!FileManager.default.fileExists(atPath: data.path))
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.fromEnvironment(["CHECKPOINT_KEY_GENERATE": "maybe"]) }
    }

    @Test("CHECKPOINT_KEY_GENERATE=true generates for serve, once; signing offline never generates, even then")
    func generateOnlyWhenAllowed() throws {
        let data = Self.folder()
        defer { try? FileManager.default.removeItem(at: data) }
        let configuration = try ServiceConfiguration.fromEnvironment(["DATA_DIR": data.path, "CHECKPOINT_KEY_GENERATE": "true"])
        #expect(throws: CheckpointKeyError.self) { try CheckpointKeyProvider(signingOffline: configuration).key() }
        #expect(!FileManager.default.fileExists(atPath: data.path))
        let made = try CheckpointKeyProvider(configuration: configuration).key()
        #expect(try CheckpointKeyProvider(configuration: configuration).key().publicKey == made.publicKey)
        var withFile = configuration
        withFile.checkpointKeyFile = data.appendingPathComponent(CheckpointKeyProvider.generatedFileName).path
        #expect(try CheckpointKeyProvider(signingOffline: withFile).key().publicKey == made.publicKey)
    }

    @Test("trusted keys from hex, PEM files, a keys file with comments and PEM blocks, and the environment")
    func trustedKeys() throws {
        let folder = Self.folder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = try (0..<4).map { _ in try Ed25519PrivateKey.generate().publicKey }
        let pemPath = folder.appendingPathComponent("one.pem").path
        try Data(try keys[1].pemRepresentation().utf8).write(to: URL(fileURLWithPath: pemPath))
        let file = folder.appendingPathComponent("trusted.txt")
        try Data("""
            # rotation: the old key until March
            \(keys[0].rawRepresentation.hexString)   # old
            \(pemPath)

            \(try keys[2].pemRepresentation())
            """.utf8).write(to: file)
        var trusted = TrustedKeys()
        try trusted.addFile(file.path)
        try trusted.addEnvironment(" \(keys[3].rawRepresentation.hexString), \(keys[0].rawRepresentation.hexString),")
        #expect(trusted.keys == keys)
        #expect(trusted.keyIDs.allSatisfy { $0.hasPrefix("ed25519:") && $0.count == 24 })
        #expect(throws: TrustedKeyError.self) { try trusted.add("not-a-key", origin: "--public-key") }
    }

    @Test("the checkpoint names its key id; bundles verify with any of several trusted keys and fail naming an untrusted signer",
          .needsDatabase)
    func keyIDsAndRotation() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let key = harness.checkpointKey.publicKey
                let checkpoint = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                #expect(checkpoint.json["key_id"] as? String == key.keyID)
                #expect(checkpoint.json["public_key"] as? String == key.rawRepresentation.hexString)

                let bundle = try await ExportTests.export(client, harness).bytes
                let (stranger, other) = (try Ed25519PrivateKey.generate().publicKey, try Ed25519PrivateKey.generate().publicKey)
                var rotated = TrustedKeys()
                rotated.add(stranger)
                rotated.add(key)
                let report = ExportBundleVerifier.verify(bundle, trusting: rotated)
                #expect(report.isValid && report.signerPinned && report.keyID == key.keyID, "\(report.failures)")

                var others = TrustedKeys()
                others.add(stranger)
                others.add(other)
                let refused = ExportBundleVerifier.verify(bundle, trusting: others)
                #expect(refused.failures.contains { $0.file == "public_key.pem" && $0.reason.contains(key.keyID) && $0.reason.contains(stranger.keyID) },
                        "\(refused.failures)")
                #expect(!ExportBundleVerifier.verify(bundle, trusting: TrustedKeys()).signerPinned)

                // The manifest's checkpoint carries key_id; one that does not match public_key fails.
                let archive = try ZipArchiveReader(bundle)
                let manifestEntry = try #require(try archive.entries.first { $0.name == "manifest.json" })
                var manifest = try #require(try JSONSerialization.jsonObject(with: Data(try archive.contents(of: manifestEntry))) as? [String: Any])
                var signed = try #require(manifest["checkpoint"] as? [String: Any])
                #expect(signed["key_id"] as? String == key.keyID)
                signed["key_id"] = stranger.keyID
                manifest["checkpoint"] = signed
                let edited = Array(try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]))
                let signature = try harness.checkpointKey.signature(for: edited)
                var writer = ZipArchiveWriter()
                var repacked: [UInt8] = []
                for entry in try archive.entries {
                    let contents = entry.name == "manifest.json" ? edited : entry.name == "manifest.sig" ? signature : try archive.contents(of: entry)
                    repacked += try writer.add(entry.name, contents: contents, modified: Date(), compress: false)
                }
                repacked += try writer.finish()
                let mismatch = ExportBundleVerifier.verify(repacked, trustedKey: key)
                #expect(mismatch.failures.contains { $0.file == "manifest.json" && $0.reason.contains("key_id") }, "\(mismatch.failures)")
            }
        }
    }
}
