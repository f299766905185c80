import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofStore
import Testing
import TestSupport

/// Rotating `DATA_KEY_FILE`: proofs sealed under the old key and the new one both read; a file
/// without the old key answers 503 `data_key_unavailable` for its proofs (nothing else breaks);
/// a foreign file is refused at start, on the newest stored key.
@Suite("Data key rotation", .needsDatabase)
struct DataKeyRotationTests {
    static func keyring(_ text: String) throws -> DataKeyProvider {
        DataKeyProvider(keys: try DataKeyring(fileText: text, path: "(test)"))
    }

    @Test("old and new proofs read after rotation; without the old key its proofs are 503 and verification names the key; a foreign file is refused")
    func rotation() async throws {
        let a = "a1 \(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())\n"
        let b = "b1 \(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())\n"
        let (before, after, onlyNew) = (try Self.keyring(a), try Self.keyring(a + b), try Self.keyring(b))
        try await APITestHarness.with { harness in
            let old = try await harness.application(dataKeys: before).test(.router) { client in
                try await harness.createDeliveryWithProof(client).reference
            }
            try await harness.application(dataKeys: after).test(.router) { client in
                let (new, upload) = try await harness.createDeliveryWithProof(client)
                #expect(upload.status == .created)
                for reference in [old, new] {
                    let png = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get, headers: harness.headers(.auditor))
                    #expect(png.status == .ok && png.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(reference)")
                    let points = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/points", method: .get, headers: harness.headers(.auditor))
                    #expect(points.status == .ok && points.bytes == Array(Samples.proofJSON().utf8), "\(reference)")
                }
                let wrappedBy = try await harness.database.query("""
                    SELECT d.reference, k.kek_id FROM delivery_data_keys k JOIN deliveries d ON d.id = k.delivery_id ORDER BY k.kek_id
                    """).rows.map { try $0.decode((String, String).self) }
                #expect(wrappedBy.map(\.0) == [old, new] && wrappedBy.map(\.1) == ["a1", "b1"], "the newest key wraps new data keys")
                let verified = try await AuditVerifier(database: harness.database, dataKeys: after).verify()
                if case .broken(let failure) = verified { Issue.record("verification after rotation: \(failure)") }
                try await ProofSealer(keys: after).checkNewestStoredKey(in: harness.database)

                // The old key dropped too early: its proofs are unavailable, the others are not.
                try await harness.application(dataKeys: onlyNew).test(.router) { client in
                    let png = try await client.execute(uri: "/v1/deliveries/\(old)/proof/signature.png", method: .get, headers: harness.headers(.auditor))
                    #expect(png.status == .serviceUnavailable && png.problemCode == "data_key_unavailable")
                    #expect((png.json["detail"] as? String)?.contains("a1") == true, "names the missing key id")
                    let fine = try await client.execute(uri: "/v1/deliveries/\(new)/proof/signature.png", method: .get, headers: harness.headers(.auditor))
                    #expect(fine.status == .ok)
                }
                await #expect(throws: SealingError.unknownKey("a1")) { try await AuditVerifier(database: harness.database, dataKeys: onlyNew).verify() }

                // Another deployment's file: refused before serving, on the newest stored key.
                let foreign = try Self.keyring("b1 \(Data(repeating: 7, count: 32).base64EncodedString())\n")
                await #expect {
                    try await ProofSealer(keys: foreign).checkNewestStoredKey(in: harness.database)
                } throws: { error in
                    guard case .invalidKeyFile(_, let reason) = error as? SealingError else { return false }
                    return reason.contains("does not open the data keys stored") && reason.contains(new)
                }
                // Served anyway (a test set-up can), it answers 503 for the proofs it cannot open, not
                // "altered", and verification stops naming the key rather than report tampering.
                try await harness.application(dataKeys: foreign).test(.router) { client in
                    let png = try await client.execute(uri: "/v1/deliveries/\(new)/proof/signature.png", method: .get, headers: harness.headers(.auditor))
                    #expect(png.status == .serviceUnavailable && png.problemCode == "data_key_unavailable", "\(png.status)")
                    let verify = try await client.execute(uri: "/v1/audit/verify", method: .get, headers: harness.headers(.auditor))
                    #expect(verify.status == .serviceUnavailable && verify.problemCode == "data_key_unavailable", "\(verify.status)")
                }
                // The old key right, the new id holding other bytes: the first proof it cannot open is named.
                let halfForeign = try Self.keyring(a + "b1 \(Data(repeating: 7, count: 32).base64EncodedString())\n")
                await #expect(throws: SealingError.wrongKey(keyID: "b1", reference: new)) {
                    try await AuditVerifier(database: harness.database, dataKeys: halfForeign).verify()
                }
            }
        }
    }
}
