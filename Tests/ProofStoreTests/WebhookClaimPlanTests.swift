import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// The sender's claim goes endpoint by endpoint (at most a few in flight to each: security issue
/// 41, item 6). It must read each endpoint's due deliveries from that endpoint's own run of the
/// index (migration 0024): reaching a fast endpoint's one due delivery past another's backlog of
/// thousands would make every claim cost the backlog.
@Suite("Webhook claim plan", .needsDatabase)
struct WebhookClaimPlanTests {
    /// Every scan of webhook_deliveries in an `EXPLAIN (ANALYZE, FORMAT JSON)` plan: its index and the rows it read.
    static func scans(_ plan: String) -> [(type: String, index: String?, rows: Int, removed: Int, loops: Int)] {
        var found: [(type: String, index: String?, rows: Int, removed: Int, loops: Int)] = []
        func walk(_ node: Any) {
            if let object = node as? [String: Any] {
                if let type = object["Node Type"] as? String, type.hasSuffix("Scan"), object["Relation Name"] as? String == "webhook_deliveries" {
                    found.append((type, object["Index Name"] as? String, (object["Actual Rows"] as? NSNumber)?.intValue ?? 0,
                                  (object["Rows Removed by Filter"] as? NSNumber)?.intValue ?? 0,
                                  (object["Actual Loops"] as? NSNumber)?.intValue ?? 0))
                }
                object.values.forEach(walk)
            } else if let array = node as? [Any] {
                array.forEach(walk)
            }
        }
        if let json = try? JSONSerialization.jsonObject(with: Data(plan.utf8)) { walk(json) }
        return found
    }

    @Test("under statistics from before a backlog, a claim reads each endpoint's few due rows, not the backlog")
    func claimSkipsTheBacklog() async throws {
        try await ScratchDatabase.with(prefix: "webhook_claim_plan") { scratch, database in
            let slow = UUID(), fast = UUID()
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)")
                for (id, name) in [(slow, "slow"), (fast, "fast")] {
                    _ = try await owner.query("""
                        INSERT INTO webhook_endpoints (id, url, events, secret_sealed)
                        VALUES (\(id), \("https://\(name).example/hook"), ARRAY['delivery.created'], '\\x00'::bytea)
                        """)
                }
                _ = try await owner.query("""
                    INSERT INTO webhook_events (id, message_id, type, payload)
                    SELECT g, gen_random_uuid(), 'delivery.created', '{}' FROM generate_series(1, 20005) g
                    """)
                _ = try await owner.query("ANALYZE webhook_deliveries")
                // The slow endpoint's backlog, all due and older than the fast endpoint's five.
                _ = try await owner.query("""
                    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at)
                    SELECT g, \(slow), now() - interval '1 hour' + g * interval '1 millisecond' FROM generate_series(1, 20000) g
                    """)
                _ = try await owner.query("""
                    INSERT INTO webhook_deliveries (event_id, endpoint_id) SELECT g, \(fast) FROM generate_series(20001, 20005) g
                    """)
            }
            // The slow endpoint is at its cap (2 in flight): the claim must find the fast one's 2 without walking the 20,000.
            let statement = WebhookDeliveryQueue.claimStatement(limit: 6, perEndpoint: 2, inFlight: [slow: 2], lease: .seconds(60))
            let plan = try await database.query("EXPLAIN (ANALYZE, FORMAT JSON) \(statement)").decode(String.self, row: 0, column: 0)
            let scans = Self.scans(plan)
            #expect(!scans.isEmpty, "\(plan)")
            #expect(scans.contains { $0.index == "webhook_deliveries_endpoint_due" }, "\(scans) \(plan)")
            #expect(scans.allSatisfy { $0.type.contains("Index") && $0.index != "webhook_deliveries_due" }, "\(scans) \(plan)")
            #expect(scans.allSatisfy { $0.rows * max($0.loops, 1) <= 10 && $0.removed <= 10 }, "\(scans) \(plan)")
            // The statement ran: the fast endpoint's two oldest are leased.
            let leased = try await database.query("""
                SELECT count(*) FROM webhook_deliveries WHERE next_attempt_at > now() + interval '30 seconds'
                """).decode(Int.self, row: 0, column: 0)
            #expect(leased == 2)
            let theirs = try await database.query("""
                SELECT count(*) FROM webhook_deliveries WHERE next_attempt_at > now() + interval '30 seconds' AND endpoint_id = \(fast)
                """).decode(Int.self, row: 0, column: 0)
            #expect(theirs == 2)
        }
    }
}
