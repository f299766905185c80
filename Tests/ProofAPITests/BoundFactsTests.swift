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

/// Issue 19's insider table: every fact a proof or delivery states is bound into its audit event,
/// so changing it afterwards — even as the superuser with the triggers off, with no event touched —
/// is named by verification.
@Suite("Facts bound into the chain", .needsDatabase)
struct BoundFactsTests {
    /// Runs `sql` as the superuser with the user triggers of `table` off, then verifies.
    static func tamper(_ harness: APITestHarness, _ client: some TestClientProtocol, table: String, _ sql: String,
                       _ binds: [any PostgresBindable] = []) async throws -> [String: Any] {
        try await harness.scratch.asSuperuser { admin in
            try await admin.withConnection { session in
                try await session.execute("ALTER TABLE \(unescaped: table) DISABLE TRIGGER USER")
                try await session.execute(sql, binds)
                try await session.execute("ALTER TABLE \(unescaped: table) ENABLE TRIGGER USER")
            }
        }
        return try await AuditTests.verify(client, harness)
    }

    /// Each case on a fresh database: one delivered proof, changed by `sql`, must give `kind`.
    static let proofCases: [(name: String, sql: String, kind: String)] = [
        // The ink is sealed (0025): one flipped bit and the box no longer opens to what was recorded.
        ("canonical ink", "UPDATE proofs SET ink = set_byte(ink, 20, get_byte(ink, 20) # 1)", "proof_ink_mismatch"),
        ("signer", "UPDATE proofs SET signer_name = 'Mallory'", "proof_metadata_mismatch"),
        ("captured_at", "UPDATE proofs SET captured_at = captured_at - interval '1 hour'", "proof_metadata_mismatch"),
        ("location", "UPDATE proofs SET location_lat = location_lat + 0.01", "proof_metadata_mismatch"),
        ("device", "UPDATE proofs SET device_model = 'Other phone'", "proof_metadata_mismatch"),
        ("flags", "UPDATE proofs SET flags = array_append(flags, 'clock_ahead')", "proof_metadata_mismatch"),
        ("render options", #"UPDATE proofs SET render_options = jsonb_set(render_options, '{scale}', '3')"#, "proof_metadata_mismatch"),
        ("uploader", "UPDATE proofs SET uploaded_by = (SELECT id FROM api_keys WHERE id <> proofs.uploaded_by LIMIT 1)", "proof_metadata_mismatch"),
    ]

    @Test("a proof's canonical ink, signer, time, location, device, flags, render options or uploader changed afterwards is named",
          arguments: proofCases.indices)
    func proofFacts(_ index: Int) async throws {
        let (name, sql, kind) = Self.proofCases[index]
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, proofID) = try await AuditTests.deliver(client, harness)
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                let result = try await Self.tamper(harness, client, table: "proofs", sql)
                #expect(result["status"] as? String == "broken", "\(name)")
                #expect(result["kind"] as? String == kind, "\(name)")
                #expect(result["proof_id"] as? String == proofID, "\(name)")
                #expect(result["subject"] as? String == "delivery:\(reference)", "\(name)")
            }
        }
    }

    @Test("two proofs swapped between their deliveries are named")
    func swappedDeliveries() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (first, _) = try await AuditTests.deliver(client, harness, signer: "First")
                let (second, _) = try await AuditTests.deliver(client, harness, signer: "Second")
                let result = try await Self.tamper(harness, client, table: "proofs", """
                    UPDATE proofs p SET delivery_id = CASE WHEN d.reference = $1 THEN (SELECT id FROM deliveries WHERE reference = $2)
                                                           ELSE (SELECT id FROM deliveries WHERE reference = $1) END
                    FROM deliveries d WHERE d.id = p.delivery_id
                    """, [first, second])
                #expect(result["status"] as? String == "broken")
                #expect(result["kind"] as? String == "proof_delivery_mismatch")
            }
        }
    }

    @Test("a delivery's recipient, address or destination changed afterwards by the owner is named, no trigger bypass needed")
    func deliveryFacts() async throws {
        for change in ["recipient_name = 'Mallory'", "address = '2 Other St'", "destination_lat = destination_lat + 1"] {
            try await APITestHarness.with { harness in
                try await harness.application().test(.router) { client in
                    let reference = try await harness.createDelivery(client)
                    #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
                    // The service's runtime role may not (it updates only a delivery's status columns)...
                    await #expect(throws: PostgresError.self) {
                        try await harness.database.query("UPDATE deliveries SET \(unescaped: change) WHERE reference = \(reference)")
                    }
                    // ...but the owner may, and no trigger stands in its way: the digest in the chain does.
                    try await PostgresClient.withClient(.forTests(url: harness.scratch.ownerURL, poolSize: 1)) { owner in
                        try await owner.query("UPDATE deliveries SET \(unescaped: change) WHERE reference = \(reference)")
                    }
                    let result = try await AuditTests.verify(client, harness)
                    #expect(result["status"] as? String == "broken", "\(change)")
                    #expect(result["kind"] as? String == "delivery_mismatch", "\(change)")
                    #expect(result["subject"] as? String == "delivery:\(reference)", "\(change)")
                }
            }
        }
    }

    @Test("a proof inserted without its event, or given a second one, is named")
    func proofWithoutOrWithTwoEvents() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, proofID) = try await AuditTests.deliver(client, harness)
                // A copy of the proof under a new id, as a superuser could insert it behind the service's back.
                let other = try await harness.createDelivery(client)
                let copy = UUID().uuidString.lowercased()
                let result = try await Self.tamper(harness, client, table: "proofs", """
                    INSERT INTO proofs SELECT (json_populate_record(p, json_build_object('id', $1::uuid, 'delivery_id',
                        (SELECT id FROM deliveries WHERE reference = $2)))).* FROM proofs p WHERE p.id = $3::uuid
                    """, [copy, other, proofID])
                #expect(result["kind"] as? String == "proof_without_event")
                #expect(result["proof_id"] as? String == copy)
                #expect(result["subject"] as? String == "delivery:\(other)", "the reference is read after the anti-join finds the row")
                _ = reference
            }
        }
    }

    @Test("events appended before the facts were bound still verify: a proof_recorded event without the new digests is checked as before")
    func olderEventsStillVerify() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                // Rewrite the newest event without the new digests and re-link its chain, as an event of the
                // previous release would read (as the superuser; the chain's own hashes are recomputed).
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        let row = try await session.query("""
                            SELECT seq, chain::int4 AS chain, encoding::int4 AS encoding, occurred_at_us, actor_key_id, actor_role::text AS actor_role,
                                action::text AS action, subject, request_id, client_address, user_agent, details_text, prev_hash::bytea AS prev_hash
                            FROM (SELECT *, (extract(epoch FROM occurred_at) * 1000000)::int8 AS occurred_at_us FROM audit_events) e
                            WHERE action = 'proof_recorded'
                            """).rows[0]
                        var details = try JSONSerialization.jsonObject(with: Data((try row.decode(String.self, "details_text")).utf8)) as! [String: String]
                        details["ink_sha256"] = nil
                        details["metadata_sha256"] = nil
                        let text = "{" + details.keys.sorted().map { "\"\($0)\":\"\(details[$0]!)\"" }.joined(separator: ",") + "}"
                        let seq: Int64 = try row.decode("seq"), chain: Int32 = try row.decode("chain")
                        let canonical = AuditEvent.canonicalBytes(
                            chain: Int16(chain), seq: seq, occurredAtMicros: try row.decode("occurred_at_us"), actorKeyID: try row.decode("actor_key_id"),
                            actorRole: try row.decode("actor_role"), action: try row.decode("action"), subject: try row.decode("subject"),
                            requestID: try row.decode("request_id"), clientAddress: try row.decode("client_address"),
                            userAgent: try row.decode("user_agent"), detailsJSON: text)
                        let hash = AuditEvent.chainHash(prevHash: try row.decode("prev_hash"), canonical: canonical)
                        try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
                        try await session.execute("ALTER TABLE audit_chains DISABLE TRIGGER USER")
                        try await session.execute("UPDATE audit_events SET details_text = $1, hash = $2 WHERE seq = $3",
                                                  [text, PostgresBytes(hash), seq])
                        try await session.execute("UPDATE audit_chains SET head_hash = $1 WHERE chain = $2 AND head_seq = $3",
                                                  [PostgresBytes(hash), Int(chain), seq])
                        try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
                        try await session.execute("ALTER TABLE audit_chains ENABLE TRIGGER USER")
                    }
                }
                #expect(try await AuditTests.verify(client, harness)["status"] as? String == "ok")
            }
        }
    }
}
