import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Archive
import Postgres
@testable import ProofService
import ProofStore
import Testing
import TestSupport

/// Erasing one delivery's personal data (migration 0026): the data key is destroyed, every clear
/// personal fact is gone from every table the service keeps, a legal hold refuses it, and the audit
/// chain still verifies and names the erased delivery.
@Suite("Erasure and legal holds", .needsDatabase)
struct ErasureTests {
    static func post(_ client: some TestClientProtocol, _ harness: APITestHarness, _ uri: String, as role: Role, _ body: String,
                     method: HTTPRequest.Method = .post) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: harness.headers(role, [.contentType: "application/json"]),
                                 body: ByteBuffer(string: body))
    }

    @Test("a held delivery is 409; erased, no table yields its name, address, note, ink or image; asked again nothing changes; the chain verifies and names it")
    func eraseOneDelivery() async throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let name = "Grace Erasable \(tag)"
        let address = "7 Quiet Lane \(tag)"
        let note = "Left with neighbour \(tag)"
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = "ERASE-\(tag)"
                let created = try await Self.post(client, harness, "/v1/deliveries", as: .dispatcher,
                                                  Samples.deliveryJSON(reference: reference, name: name, address: address, lat: 52.52, lon: 13.405))
                try #require(created.status == .created)
                let attempt = try await Self.post(client, harness, "/v1/deliveries/\(reference)/attempts", as: .courier,
                                                  DeliveryLifecycleTests.attemptJSON(note: note))
                try #require(attempt.status == .created)
                let pending = try await Self.post(client, harness, "/v1/deliveries/\(reference)/erase", as: .admin, #"{"reason":"GDPR-17"}"#)
                #expect(pending.status == .conflict && pending.json["code"] as? String == "delivery_pending")
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: harness.headers(.courier),
                                                      body: ByteBuffer(string: Samples.proofJSON(signer: name)))
                try #require(upload.status == .created)
                let base = "/v1/deliveries/\(reference)"

                let dispatcher = try await Self.post(client, harness, base + "/erase", as: .dispatcher, #"{"reason":"GDPR-17"}"#)
                #expect(dispatcher.status == .forbidden)
                let noReason = try await Self.post(client, harness, base + "/erase", as: .admin, "{}")
                #expect(noReason.status == .unprocessableContent)

                let held = try await Self.post(client, harness, base + "/legal-hold", as: .auditor, #"{"reason":"Claim 4711"}"#, method: .put)
                #expect(held.status == .ok && held.json["already_held"] as? Bool == false)
                let again = try await Self.post(client, harness, base + "/legal-hold", as: .admin, #"{"reason":"Other"}"#, method: .put)
                #expect(again.json["already_held"] as? Bool == true && again.json["reason"] as? String == "Claim 4711", "the first hold stands")
                let refused = try await Self.post(client, harness, base + "/erase", as: .admin, #"{"reason":"GDPR-17"}"#)
                #expect(refused.status == .conflict && refused.json["code"] as? String == "legal_hold")
                let png = try await client.execute(uri: base + "/proof/signature.png", method: .get, headers: harness.headers(.dispatcher))
                #expect(png.status == .ok, "nothing was erased under the hold")
                let cleared = try await client.execute(uri: base + "/legal-hold", method: .delete, headers: harness.headers(.auditor))
                #expect(cleared.status == .noContent)
                let gone = try await client.execute(uri: base + "/legal-hold", method: .get, headers: harness.headers(.auditor))
                #expect(gone.status == .notFound)

                let erased = try await Self.post(client, harness, base + "/erase", as: .admin, #"{"reason":"GDPR-17 request 88"}"#)
                #expect(erased.status == .ok)
                #expect(erased.json["already_erased"] as? Bool == false)
                let delivery = try #require(erased.json["delivery"] as? [String: Any])
                #expect(delivery["erased_at"] is String)
                #expect((delivery["recipient"] as? [String: Any])?["name"] as? String == "")
                #expect(delivery["address"] as? String == "" && delivery["destination"] is NSNull)
                let twice = try await Self.post(client, harness, base + "/erase", as: .admin, #"{"reason":"GDPR-17 request 88"}"#)
                #expect(twice.status == .ok && twice.json["already_erased"] as? Bool == true)
                #expect((twice.json["delivery"] as? [String: Any])?["erased_at"] as? String == delivery["erased_at"] as? String)
                let holdErased = try await Self.post(client, harness, base + "/legal-hold", as: .auditor, #"{"reason":"late"}"#, method: .put)
                #expect(holdErased.status == .conflict && holdErased.json["code"] as? String == "delivery_erased")

                for path in ["/proof/signature.png", "/proof/signature.svg", "/proof/signature.png?width=100"] {
                    let read = try await client.execute(uri: base + path, method: .get, headers: harness.headers(.dispatcher))
                    #expect(read.status == .gone && read.json["code"] as? String == "proof_erased", "\(path)")
                }
                let points = try await client.execute(uri: base + "/proof/points", method: .get, headers: harness.headers(.auditor))
                #expect(points.status == .gone)
                let search = try await client.execute(uri: "/v1/deliveries?q=Erasable%20\(tag)", method: .get, headers: harness.headers(.dispatcher))
                #expect((search.json["items"] as? [Any])?.isEmpty == true, "the search finds nothing")

                // Every table the service keeps, read as text: none holds the name, address or note.
                let found = try await harness.database.query("""
                    SELECT 'deliveries' AS place FROM deliveries d WHERE d::text LIKE '%' || \(tag) || '%' AND d.reference <> \(reference)::text
                    UNION ALL SELECT 'deliveries' FROM deliveries d WHERE concat(d.recipient_name, d.address, d.close_reason) LIKE '%' || \(tag) || '%'
                    UNION ALL SELECT 'proofs' FROM proofs p WHERE p.signer_name IS NOT NULL AND p.signer_name LIKE '%' || \(tag) || '%'
                    UNION ALL SELECT 'proofs.bytes' FROM proofs p JOIN deliveries d ON d.id = p.delivery_id
                        WHERE d.reference = \(reference)::text AND octet_length(p.body) + octet_length(p.ink) + octet_length(p.png) > 0
                    UNION ALL SELECT 'attempts' FROM delivery_attempts a WHERE a.note LIKE '%' || \(tag) || '%' OR a.location_lat IS NOT NULL
                        AND a.delivery_id = (SELECT id FROM deliveries WHERE reference = \(reference)::text)
                    UNION ALL SELECT 'search_text' FROM delivery_search_text t WHERE t.reference = \(reference)::text
                    UNION ALL SELECT 'proof_search' FROM proof_search s WHERE s.signer_name LIKE '%' || \(tag) || '%'
                    UNION ALL SELECT 'data_key' FROM delivery_data_keys k JOIN deliveries d ON d.id = k.delivery_id WHERE d.reference = \(reference)::text
                    UNION ALL SELECT 'webhook_events' FROM webhook_events w WHERE w.payload LIKE '%' || \(tag) || '%' AND w.type <> 'delivery.delivered'
                    UNION ALL SELECT 'idempotency' FROM idempotency_records r WHERE convert_from(coalesce(r.response_body, ''), 'UTF8') LIKE '%' || \(tag) || '%'
                    """).rows.map { try $0.decode(String.self, "place") }
                #expect(found.isEmpty, "clear personal data left in \(found)")

                let events = try await client.execute(uri: "/v1/audit/events?subject=delivery:\(reference)", method: .get, headers: harness.headers(.auditor))
                let actions = (events.json["items"] as? [[String: Any]])?.compactMap { $0["action"] as? String } ?? []
                #expect(actions.filter { $0 == "delivery_erased" }.count == 1, "one erasure event: \(actions)")
                #expect(actions.contains("legal_hold_set") && actions.contains("legal_hold_cleared"))

                let report = try await AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider)
                    .verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .ok = report.result else { Issue.record("the chain no longer verifies: \(report.result)"); return }
                #expect(report.erasedDeliveries.contains(reference))
            }
        }
    }

    @Test("the database admits only the erasure's change: no erasing with a dispatcher's token, no change to an erased row, no erased form of a live one; an erasure without its event breaks verification")
    func theGuardsHold() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, upload) = try await harness.createDeliveryWithProof(client)
                try #require(upload.status == .created)
                let (other, otherUpload) = try await harness.createDeliveryWithProof(client)
                try #require(otherUpload.status == .created)
                await #expect(throws: PostgresError.self, "a dispatcher's token may not erase") {
                    try await harness.database.query("SELECT * FROM countersign_erase_delivery(\(reference)::text, \(harness.tokens[.dispatcher]!)::text)")
                }
                let erased = try await Self.post(client, harness, "/v1/deliveries/\(reference)/erase", as: .admin, #"{"reason":"R-1"}"#)
                try #require(erased.status == .ok)
                // As the superuser: the guards are triggers, which bind the owner and the superuser too.
                try await harness.scratch.asSuperuser { admin in
                    await #expect(throws: PostgresError.self, "an erased delivery never changes again") {
                        try await admin.query("UPDATE deliveries SET recipient_name = 'Back' WHERE reference = \(reference)::text")
                    }
                    await #expect(throws: PostgresError.self, "a live delivery's proof cannot be put into its erased form") {
                        try await admin.query("""
                            UPDATE proofs SET signer_name = NULL, location_lat = NULL, location_lon = NULL, location_accuracy_m = NULL, device_id = NULL,
                                device_model = NULL, device_os = NULL, device_app = NULL, body = '\\x', ink = '\\x', png = '\\x', sealing = 2
                            WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = \(other)::text)
                            """)
                    }
                    await #expect(throws: PostgresError.self, "an erased proof changes no further") {
                        try await admin.query("""
                            UPDATE proofs SET flags = '{outside_geofence}' WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = \(reference)::text)
                            """)
                    }
                    await #expect(throws: PostgresError.self, "a live delivery's data key stays") {
                        try await admin.query("""
                            DELETE FROM delivery_data_keys WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = \(other)::text)
                            """)
                    }
                }
                let other2 = try await client.execute(uri: "/v1/deliveries/\(other)/proof/signature.png", method: .get, headers: harness.headers(.dispatcher))
                #expect(other2.status == .ok, "the other delivery is untouched")

                // Erased behind the service's back (guards off): the chain's hashes still hold, but
                // verification names the delivery whose erasure has no event.
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.executeScript("ALTER TABLE deliveries DISABLE TRIGGER USER")
                        try await session.query("""
                            UPDATE deliveries SET recipient_name = NULL, address = NULL, erased_at = now(), erasure_rule = 'request'
                            WHERE reference = \(other)::text
                            """)
                        try await session.executeScript("ALTER TABLE deliveries ENABLE TRIGGER USER")
                    }
                }
                let report = try await AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider)
                    .verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .broken(let failure) = report.result else {
                    Issue.record("an erasure without its event went unnoticed")
                    return
                }
                #expect(failure.kind == .erasureWithoutEvent && failure.subject == "delivery:\(other)", "\(failure)")
            }
        }
    }

    @Test("a bundle exported before the erasure still verifies; one exported after leaves the erased proof out, keeps its events and verifies")
    func exportsAroundAnErasure() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let references = try await ExportTests.seed(client, harness)
                let key = harness.checkpointKey.publicKey
                let before = try await ExportTests.export(client, harness)
                try #require(before.status == .ok)
                let erased = try await Self.post(client, harness, "/v1/deliveries/\(references[1])/erase", as: .admin, #"{"reason":"R-2"}"#)
                try #require(erased.status == .ok)

                let beforeReport = ExportBundleVerifier.verify(before.bytes, trustedKey: key)
                #expect(beforeReport.isValid && beforeReport.verifiedProofs == 3, "\(beforeReport.failures)")
                let after = try await ExportTests.export(client, harness)
                try #require(after.status == .ok, "an erased proof does not stop the export")
                let names = try ZipArchiveReader(after.bytes).entries.map(\.name)
                #expect(!names.contains { $0.hasPrefix("deliveries/\(references[1])/") }, "nothing of the erased proof")
                let afterReport = ExportBundleVerifier.verify(after.bytes, trustedKey: key)
                #expect(afterReport.isValid && afterReport.verifiedProofs == 2, "\(afterReport.failures)")
            }
        }
    }
}
