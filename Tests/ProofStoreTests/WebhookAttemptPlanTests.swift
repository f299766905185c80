import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// Recording a webhook attempt updates its delivery only while it is pending. Statistics taken
/// before a backlog (an endpoint down, then thousands of pending deliveries) made the planner read
/// that check through the partial index of pending deliveries, whole, as if it held one row: each
/// attempt then read every pending delivery.
@Suite("Webhook attempt plan", .needsDatabase)
struct WebhookAttemptPlanTests {
    @Test("under statistics from before a backlog, an attempt reads its own delivery and no other")
    func attemptReadsOneDelivery() async throws {
        try await ScratchDatabase.with(prefix: "webhook_plan") { scratch, database in
            let endpoint = UUID()
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                // Autovacuum would otherwise analyse the new rows whenever it next wakes.
                _ = try await owner.query("ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)")
                _ = try await owner.query("""
                    INSERT INTO webhook_endpoints (id, url, events, secret_sealed)
                    VALUES (\(endpoint), 'https://receiver.example/hook', ARRAY['proof.recorded'], '\\x00'::bytea)
                    """)
                _ = try await owner.query("""
                    INSERT INTO webhook_events (id, message_id, type, payload)
                    SELECT g, gen_random_uuid(), 'proof.recorded', '{}' FROM generate_series(1, 25000) g
                    """)
                _ = try await owner.query("""
                    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, completed_at)
                    SELECT g, \(endpoint), 'succeeded', now() FROM generate_series(1, 20000) g
                    """)
                _ = try await owner.query("ANALYZE webhook_deliveries")
                _ = try await owner.query("""
                    INSERT INTO webhook_deliveries (event_id, endpoint_id) SELECT g, \(endpoint) FROM generate_series(20001, 25000) g
                    """)
            }
            let id: UUID = try await database.query("SELECT id FROM webhook_deliveries WHERE event_id = 22500").decode(row: 0, column: 0)
            let claimed = ClaimedWebhookDelivery(id: id, attempts: 0, createdAt: Date(), messageID: UUID(), payload: "{}",
                                                 endpointID: endpoint, url: "https://receiver.example/hook", secretSealed: [0],
                                                 previousSecretSealed: nil, failingSince: nil)
            let outcome = WebhookAttemptOutcome(succeeded: true, statusCode: 204, latencyMilliseconds: 12, error: nil, nextAttemptAt: nil)
            let statement = WebhookDeliveryQueue.attemptStatement(outcome, for: claimed, disableSeconds: 3600)
            let result = try await database.query("EXPLAIN (ANALYZE, FORMAT JSON) \(statement)")
            let plan = try result.decode(String.self, row: 0, column: 0)
            let scans = DeliverySearchTests.nodes(plan).filter { $0.relation == "webhook_deliveries" && $0.type.hasSuffix("Scan") }
            #expect(scans.count == 1, "\(plan)")
            #expect(scans.allSatisfy { $0.index == "webhook_deliveries_pkey" && ($0.rows ?? .max) <= 1 }, "\(scans) \(plan)")
            // The statement ran: the delivery succeeded, with its attempt.
            let state: String = try await database.query("SELECT state FROM webhook_deliveries WHERE id = \(id)").decode(row: 0, column: 0)
            #expect(state == "succeeded")
            let attempts: Int = try await database.query("SELECT count(*) FROM webhook_attempts WHERE delivery_id = \(id)").decode(row: 0, column: 0)
            #expect(attempts == 1)
        }
    }
}
