import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofService
import ProofStore
import Testing
import TestSupport
@testable import ProofAPI

/// A device-signed proof in a version 3 bundle: `metadata.json` carries the key id, public key and
/// signature, the bundle verifies alone (the signature over the event's body digest and the
/// delivery), and a changed signature or public key is named.
@Suite("Device keys in export bundles", .needsDatabase)
struct DeviceKeyBundleTests {
    @Test("a signed proof's bundle verifies; its device signature or public key changed in metadata.json is named")
    func signedProofInBundle() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (key, keyID) = try await DeviceKeyTests.approvedKey(client, harness)
                let reference = try await harness.createDelivery(client)
                let body = Array(Samples.proofJSON().utf8)
                #expect(try await DeviceKeyTests.upload(client, reference: reference, body: body,
                                                        headers: try DeviceKeyTests.signed(harness, key, keyID: keyID, reference: reference,
                                                                                           body: body)).status == .created)
                _ = try await AuditTests.deliver(client, harness)  // and an unsigned one beside it
                let bundle = try await ExportTests.export(client, harness).bytes
                let trusted = harness.checkpointKey.publicKey
                let report = ExportBundleVerifier.verify(bundle, trustedKey: trusted)
                #expect(report.isValid, "\(report.failures)")
                #expect(report.verifiedProofs == 2)

                let file = "deliveries/\(reference)/metadata.json"
                let archive = try ZipArchiveReader(bundle)
                let metadata = String(decoding: try archive.contents(of: try #require(try archive.entries.first { $0.name == file })), as: UTF8.self)
                let publicKey = Data(key.publicKey.rawRepresentation).base64EncodedString()
                #expect(metadata.contains(#""device_signature":{"key_id":"\#(keyID)","public_key":"\#(publicKey)","signature":""#))

                let stranger = Data(try Ed25519PrivateKey.generate().publicKey.rawRepresentation).base64EncodedString()
                let otherKey = try StandaloneBundleTests.repack(bundle) { name, contents in
                    name == file ? try StandaloneBundleTests.replacing(contents, publicKey, stranger) : contents
                }
                #expect(ExportBundleVerifier.verify(otherKey, trustedKey: trusted).failures
                    .contains { $0.file == file && $0.reason.contains("does not verify") })
                let dropped = try StandaloneBundleTests.repack(bundle) { name, contents in
                    name == file ? try StandaloneBundleTests.replacing(contents, #""device_signature":{"key_id":"\#(keyID)""#,
                                                                       #""device_signature":{"key_id":"\#(UUID().uuidString.lowercased())""#) : contents
                }
                #expect(ExportBundleVerifier.verify(dropped, trustedKey: trusted).failures
                    .contains { $0.file == file && $0.reason.contains("device_signature") })
            }
        }
    }
}
