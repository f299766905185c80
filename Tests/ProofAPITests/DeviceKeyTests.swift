import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofService
import ProofStore
import Testing
import TestSupport
@testable import ProofAPI

/// Device keys (issue 21, migration 0017): registration and approval by role, signed uploads under
/// each `DEVICE_KEYS` mode, every refusal, and verification naming a tampered signature or key.
@Suite("Device keys", .needsDatabase)
struct DeviceKeyTests {
    /// Registers a fresh key as `role` (the harness's key, or `token` when given); returns the private key and the answer.
    static func register(_ client: some TestClientProtocol, _ harness: APITestHarness, as role: Role = .courier, token: String? = nil,
                         label: String = "van 12 handheld") async throws -> (key: Ed25519PrivateKey, response: TestResponse) {
        let key = try Ed25519PrivateKey.generate()
        var headers = harness.headers(token == nil ? role : nil)
        if let token { headers[.authorization] = "Bearer \(token)" }
        let body = #"{"public_key":"\#(Data(key.publicKey.rawRepresentation).base64EncodedString())","label":"\#(label)"}"#
        let response = try await client.execute(uri: "/v1/devices", method: .post, headers: headers, body: ByteBuffer(string: body))
        return (key, response)
    }

    /// A registered and approved key of the harness's courier: the private key and its id.
    static func approvedKey(_ client: some TestClientProtocol, _ harness: APITestHarness) async throws -> (Ed25519PrivateKey, String) {
        let (key, response) = try await register(client, harness)
        #expect(response.status == .created)
        let id = try #require(response.json["id"] as? String)
        let approval = try await client.execute(uri: "/v1/devices/\(id)/approve", method: .post, headers: harness.headers(.dispatcher))
        #expect(approval.status == .ok)
        return (key, id)
    }

    /// The signature headers for uploading `body` to `reference` with `key` (id `keyID`), as docs/api.md defines them.
    static func signed(_ harness: APITestHarness, _ key: Ed25519PrivateKey, keyID: String, reference: String, body: [UInt8],
                       as role: Role = .courier) throws -> HTTPFields {
        let message = DeviceUploadMessage.bytes(reference: reference, keyID: UUID(uuidString: keyID)!, bodySHA256: SHA256.hash(body))
        var headers = harness.headers(role)
        headers[.deviceKey] = keyID
        headers[.deviceSignature] = Data(try key.signature(for: message)).base64EncodedString()
        return headers
    }

    static func upload(_ client: some TestClientProtocol, reference: String, body: [UInt8], headers: HTTPFields) async throws -> TestResponse {
        try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    @Test("a courier registers, a dispatcher approves and revokes; couriers and auditors cannot; every step is an audit event binding the key")
    func lifecycleAndRoles() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (key, created) = try await Self.register(client, harness)
                #expect(created.status == .created)
                #expect(created.json["status"] as? String == "registered")
                #expect(created.json["public_key"] as? String == Data(key.publicKey.rawRepresentation).base64EncodedString())
                #expect(created.json["fingerprint"] as? String == key.publicKey.keyID)
                let id = try #require(created.json["id"] as? String)
                #expect(created.headers[.location] == "/v1/devices/\(id)")

                for role in [Role.courier, .auditor] {
                    let refused = try await client.execute(uri: "/v1/devices/\(id)/approve", method: .post, headers: harness.headers(role))
                    #expect(refused.status == .forbidden, "\(role)")
                }
                let approved = try await client.execute(uri: "/v1/devices/\(id)/approve", method: .post, headers: harness.headers(.dispatcher))
                #expect(approved.status == .ok)
                #expect(approved.json["status"] as? String == "approved")
                #expect(approved.json["approved_by"] as? String == harness.actors[.dispatcher]!.keyID.uuidString.lowercased())
                let revoked = try await client.execute(uri: "/v1/devices/\(id)/revoke", method: .post, headers: harness.headers(.admin))
                #expect(revoked.json["status"] as? String == "revoked")
                let again = try await client.execute(uri: "/v1/devices/\(id)/approve", method: .post, headers: harness.headers(.admin))
                #expect(again.status == .conflict)
                #expect(again.problemCode == "device_key_revoked")

                let events = try await harness.database.query("""
                    SELECT action, details ->> 'public_key' FROM audit_events WHERE subject = \("device_key:" + id) ORDER BY seq
                    """).rows.map { try $0.decode((String, String).self) }
                #expect(events.map(\.0) == ["device_key_registered", "device_key_approved", "device_key_revoked"])
                #expect(Set(events.map(\.1)) == [key.publicKey.rawRepresentation.hexString])
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
            }
        }
    }

    @Test("a courier sees only its own keys; a duplicate or malformed public key is refused")
    func visibilityAndValidation() async throws {
        try await APITestHarness.with { harness in
            let (_, otherToken) = try await APIKeyRepository(database: harness.database).create(name: "other courier", role: .courier)
            try await harness.application().test(.router) { client in
                let (key, mine) = try await Self.register(client, harness)
                let (_, theirs) = try await Self.register(client, harness, token: otherToken)
                let theirID = try #require(theirs.json["id"] as? String)
                let list = try await client.execute(uri: "/v1/devices", method: .get, headers: harness.headers(.courier))
                let ids = (list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(ids == [mine.json["id"] as? String])
                let hidden = try await client.execute(uri: "/v1/devices/\(theirID)", method: .get, headers: harness.headers(.courier))
                #expect(hidden.status == .notFound)
                let all = try await client.execute(uri: "/v1/devices?status=registered", method: .get, headers: harness.headers(.auditor))
                #expect((all.json["items"] as? [[String: Any]])?.count == 2)

                let body = #"{"public_key":"\#(Data(key.publicKey.rawRepresentation).base64EncodedString())","label":"again"}"#
                let retried = try await client.execute(uri: "/v1/devices", method: .post, headers: harness.headers(.courier),
                                                       body: ByteBuffer(string: body))
                #expect(retried.status == .ok)
                #expect(retried.json["id"] as? String == mine.json["id"] as? String)
                var other = harness.headers(nil)
                other[.authorization] = "Bearer \(otherToken)"
                let duplicate = try await client.execute(uri: "/v1/devices", method: .post, headers: other, body: ByteBuffer(string: body))
                #expect(duplicate.status == .conflict)
                #expect(duplicate.problemCode == "device_key_exists")
                for body in [#"{"public_key":"AAAA","label":"x"}"#, #"{"label":"x"}"#, #"{"public_key":"\#(String(repeating: "A", count: 43))=","label":""}"#,
                             #"{"public_key":5,"label":"x"}"#] {
                    let refused = try await client.execute(uri: "/v1/devices", method: .post, headers: harness.headers(.courier),
                                                           body: ByteBuffer(string: body))
                    #expect(refused.status == .unprocessableContent, "\(body)")
                }
            }
        }
    }

    /// Issue 41's weak keys: the identity, the all-zero point (order 4) and a point of order 8. Under
    /// each, libcrypto alone verifies constant or easily found signatures for any upload.
    static let weakKeys = ["AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                           "JuiVj8KyJ7BFw/SJ8u+Y8NXfrAXTxjM5sTgCiG1T/AU="]

    @Test("a public key of small order (the identity, all zero, order 8) is refused: 422 invalid_public_key saying why")
    func weakKeysRefused() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                for key in Self.weakKeys {
                    let body = #"{"public_key":"\#(key)","label":"van 12 handheld"}"#
                    let refused = try await client.execute(uri: "/v1/devices", method: .post, headers: harness.headers(.courier),
                                                           body: ByteBuffer(string: body))
                    #expect(refused.status == .unprocessableContent, "\(key)")
                    let errors = refused.json["errors"] as? [[String: Any]] ?? []
                    #expect(errors.first?["field"] as? String == "/public_key", "\(key): \(errors)")
                    #expect(errors.first?["code"] as? String == "invalid_public_key", "\(key): \(errors)")
                    #expect((errors.first?["message"] as? String)?.contains("small order") == true, "\(key): \(errors)")
                }
                let stored = try await harness.database.query("SELECT count(*)::int8 FROM device_keys").rows[0].decode(Int64.self)
                #expect(stored == 0)
            }
        }
    }

    @Test("an approved identity key stored before keys were checked signs nothing: the constant signature is 403 device_signature_invalid")
    func storedWeakKeySignsNothing() async throws {
        try await APITestHarness.with { harness in
            let identity = try #require(Data(base64Encoded: Self.weakKeys[0]).map(Array.init))
            let courier = try #require(harness.actors[.courier])
            let legacy = try await DeviceKeyRepository(database: harness.database)
                .register(publicKey: identity, label: "legacy", owner: courier.keyID, origin: AuditOrigin(actor: courier))
            let keyID = legacy.id.uuidString.lowercased()
            try await harness.application().test(.router) { client in
                let approval = try await client.execute(uri: "/v1/devices/\(keyID)/approve", method: .post, headers: harness.headers(.dispatcher))
                #expect(approval.status == .ok)
                let reference = try await harness.createDelivery(client)
                var headers = harness.headers(.courier)
                headers[.deviceKey] = keyID
                headers[.deviceSignature] = Data(identity + [UInt8](repeating: 0, count: 32)).base64EncodedString()
                let response = try await Self.upload(client, reference: reference, body: Array(Samples.proofJSON().utf8), headers: headers)
                #expect(response.status == .forbidden)
                #expect(response.problemCode == "device_signature_invalid")
                #expect((response.json["detail"] as? String)?.contains("small order") == true, "\(response.json)")
                let proofs = try await harness.database.query("SELECT count(*)::int8 FROM proofs").rows[0].decode(Int64.self)
                #expect(proofs == 0)
            }
        }
    }

    @Test("optional (the default): an unsigned upload is accepted, a signed one is verified, stored and bound into its event")
    func optionalMode() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (key, keyID) = try await Self.approvedKey(client, harness)
                let unsigned = try await harness.createDelivery(client)
                #expect(try await Self.upload(client, reference: unsigned, body: Array(Samples.proofJSON().utf8),
                                              headers: harness.headers(.courier)).status == .created)
                let reference = try await harness.createDelivery(client)
                let body = Array(Samples.proofJSON().utf8)
                let response = try await Self.upload(client, reference: reference, body: body,
                                                     headers: try Self.signed(harness, key, keyID: keyID, reference: reference, body: body))
                #expect(response.status == .created)
                let row = try await harness.database.query("""
                    SELECT p.device_key_id::text, p.device_signature FROM proofs p JOIN deliveries d ON d.id = p.delivery_id
                    WHERE d.reference = \(reference)
                    """).rows[0].decode((String, [UInt8]).self)
                #expect(row.0 == keyID)
                #expect(row.1.count == 64)
                let details = try await harness.database.query("""
                    SELECT details ->> 'device_key_id', details ->> 'device_signature' FROM audit_events
                    WHERE action = 'proof_recorded' AND subject = \("delivery:" + reference)
                    """).rows[0].decode((String, String).self)
                #expect(details.0 == keyID)
                #expect(details.1 == row.1.hexString)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
            }
        }
    }

    @Test("required: an unsigned upload is refused; off: the headers are ignored")
    func requiredAndOff() async throws {
        try await APITestHarness.with { harness in
            var required = APIPolicy()
            required.deviceKeys = .required
            try await harness.application(policy: required).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let refused = try await Self.upload(client, reference: reference, body: Array(Samples.proofJSON().utf8),
                                                    headers: harness.headers(.courier))
                #expect(refused.status == .forbidden)
                #expect(refused.problemCode == "device_signature_required")
                let (key, keyID) = try await Self.approvedKey(client, harness)
                let body = Array(Samples.proofJSON().utf8)
                #expect(try await Self.upload(client, reference: reference, body: body,
                                              headers: try Self.signed(harness, key, keyID: keyID, reference: reference, body: body)).status == .created)
            }
            var off = APIPolicy()
            off.deviceKeys = .off
            try await harness.application(policy: off).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                var headers = harness.headers(.courier)
                headers[.deviceKey] = "not-a-key"
                headers[.deviceSignature] = "nonsense"
                #expect(try await Self.upload(client, reference: reference, body: Array(Samples.proofJSON().utf8), headers: headers).status == .created)
                let stored = try await harness.database.query("""
                    SELECT count(*)::int8 FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = \(reference) AND p.device_key_id IS NULL
                    """).rows[0].decode(Int64.self)
                #expect(stored == 1)
            }
        }
    }

    @Test("a tampered body, a re-targeted body, an unapproved, revoked, unknown or another courier's key, a malformed header: refused, nothing stored")
    func refusals() async throws {
        try await APITestHarness.with { harness in
            let (_, otherToken) = try await APIKeyRepository(database: harness.database).create(name: "other courier", role: .courier)
            try await harness.application().test(.router) { client in
                let (key, keyID) = try await Self.approvedKey(client, harness)
                let reference = try await harness.createDelivery(client)
                let other = try await harness.createDelivery(client)
                let body = Array(Samples.proofJSON().utf8)
                let good = try Self.signed(harness, key, keyID: keyID, reference: reference, body: body)

                let tampered = Array(Samples.proofJSON(signer: "Mallory").utf8)
                var response = try await Self.upload(client, reference: reference, body: tampered, headers: good)
                #expect(response.status == .forbidden)
                #expect(response.problemCode == "device_signature_invalid")

                response = try await Self.upload(client, reference: other, body: body, headers: good)
                #expect(response.problemCode == "device_signature_invalid")

                let (pending, registered) = try await Self.register(client, harness)
                let pendingID = try #require(registered.json["id"] as? String)
                response = try await Self.upload(client, reference: reference, body: body,
                                                 headers: try Self.signed(harness, pending, keyID: pendingID, reference: reference, body: body))
                #expect(response.problemCode == "device_key_not_approved")

                response = try await Self.upload(client, reference: reference, body: body,
                                                 headers: try Self.signed(harness, key, keyID: UUID().uuidString.lowercased(), reference: reference, body: body))
                #expect(response.problemCode == "device_key_unknown")

                let (theirs, theirResponse) = try await Self.register(client, harness, token: otherToken)
                let theirID = try #require(theirResponse.json["id"] as? String)
                _ = try await client.execute(uri: "/v1/devices/\(theirID)/approve", method: .post, headers: harness.headers(.dispatcher))
                response = try await Self.upload(client, reference: reference, body: body,
                                                 headers: try Self.signed(harness, theirs, keyID: theirID, reference: reference, body: body))
                #expect(response.problemCode == "device_key_not_yours")

                var malformed = good
                malformed[.deviceSignature] = "AAAA"
                response = try await Self.upload(client, reference: reference, body: body, headers: malformed)
                #expect(response.status == .badRequest)
                #expect(response.problemCode == "device_signature_malformed")
                malformed = good
                malformed[.deviceSignature] = nil
                #expect(try await Self.upload(client, reference: reference, body: body, headers: malformed).problemCode == "device_signature_malformed")

                _ = try await client.execute(uri: "/v1/devices/\(keyID)/revoke", method: .post, headers: harness.headers(.dispatcher))
                response = try await Self.upload(client, reference: reference, body: body, headers: good)
                #expect(response.problemCode == "device_key_revoked")

                let proofs = try await harness.database.query("SELECT count(*)::int8 FROM proofs").rows[0].decode(Int64.self)
                #expect(proofs == 0)
            }
        }
    }

    /// One signed proof, then `sql` as the owner with `table`'s triggers off; verification must name `kind`.
    static let tamperCases: [(name: String, table: String, sql: String, kind: String)] = [
        ("signature", "proofs", "UPDATE proofs SET device_signature = set_byte(device_signature, 0, get_byte(device_signature, 0) # 1)",
         "proof_device_mismatch"),
        ("signature removed", "proofs", "UPDATE proofs SET device_key_id = NULL, device_signature = NULL", "proof_device_mismatch"),
        ("body", "proofs", "UPDATE proofs SET body = body || ' '::bytea, body_sha256 = sha256(body || ' '::bytea)", "proof_body_mismatch"),
        ("device key row", "device_keys", "UPDATE device_keys SET public_key = sha256(public_key)", "device_key_mismatch"),
        ("device key owner", "device_keys",
         "UPDATE device_keys SET registered_by = (SELECT id FROM api_keys WHERE role = 'admin')", "device_key_mismatch"),
    ]

    @Test("verification names a changed stored signature, body or device key row", arguments: tamperCases.indices)
    func verificationFindsTampering(_ index: Int) async throws {
        let (name, table, sql, kind) = Self.tamperCases[index]
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (key, keyID) = try await Self.approvedKey(client, harness)
                let reference = try await harness.createDelivery(client)
                let body = Array(Samples.proofJSON().utf8)
                #expect(try await Self.upload(client, reference: reference, body: body,
                                              headers: try Self.signed(harness, key, keyID: keyID, reference: reference, body: body)).status == .created)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                // As the owner (who owns the tables, so may switch their triggers off), not the superuser.
                let owner = harness.scratch.ownerClient(poolSize: 1)
                do {
                    try await owner.withConnection { session in
                        try await session.execute("ALTER TABLE \(unescaped: table) DISABLE TRIGGER USER")
                        try await session.execute(PostgresQuery(unescaped: sql))
                        try await session.execute("ALTER TABLE \(unescaped: table) ENABLE TRIGGER USER")
                    }
                } catch {
                    await owner.shutdown()
                    throw error
                }
                await owner.shutdown()
                let result = try await AuditTests.verify(client, harness)
                #expect(result["status"] as? String == "broken", "\(name)")
                #expect(result["kind"] as? String == kind, "\(name): \(result)")
                // What `countersign verify --database` runs: the same verifier, naming the proof.
                guard case .broken(let failure) = try await AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider).verify() else {
                    Issue.record("\(name): the verifier found nothing")
                    return
                }
                #expect(failure.kind.rawValue == kind, "\(name)")
                if table == "proofs" { #expect(failure.proofID != nil && failure.subject == "delivery:" + reference, "\(name)") }
            }
        }
    }

    @Test("the database itself refuses a signed proof whose key is not approved, and a status change outside the functions")
    func databaseGuards() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (_, registered) = try await Self.register(client, harness)
                let id = try #require(registered.json["id"] as? String)
                await #expect(throws: PostgresError.self) {
                    try await harness.database.query("UPDATE device_keys SET status = 'approved' WHERE id = \(UUID(uuidString: id)!)")
                }
                await #expect(throws: PostgresError.self) {
                    try await harness.database.query("DELETE FROM device_keys WHERE id = \(UUID(uuidString: id)!)")
                }
                // A signed copy of a stored proof, written straight to the table: the trigger refuses the unapproved key.
                _ = try await harness.createDeliveryWithProof(client)
                let refusal = await #expect(throws: PostgresError.self) {
                    try await harness.database.query("""
                        INSERT INTO proofs SELECT * FROM jsonb_populate_record(NULL::proofs, (
                            SELECT to_jsonb(p) || jsonb_build_object('id', gen_random_uuid(), 'device_key_id', \(id)::text,
                                                                     'device_signature', '\\x' || repeat('00', 64))
                            FROM proofs p LIMIT 1))
                        """)
                }
                #expect(refusal?.constraint == "device_key_not_usable")
                await #expect(throws: PostgresError.self) {
                    try await harness.database.query("""
                        INSERT INTO device_keys (id, registered_by, public_key, label, status)
                        VALUES (\(UUID()), \(harness.actors[.courier]!.keyID), \(PostgresBytes([UInt8](repeating: 7, count: 32))), 'x', 'approved')
                        """)
                }
            }
        }
    }
}
