import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// Storing a proof marks its delivery delivered if it is still pending. Statistics taken when
/// nearly every delivery was delivered, followed by many new pending deliveries (a morning's
/// import before autovacuum analyses the table again), made the planner read that check through
/// the `(status, seq)` index as if it matched one row: every upload then walked all pending
/// deliveries, so uploads slowed down as the pending deliveries grew.
@Suite("Proof record plan", .needsDatabase)
struct ProofRecordPlanTests {
    @Test("under statistics from before many pending deliveries, an upload reads its own delivery and no other")
    func uploadReadsOneDelivery() async throws {
        try await ScratchDatabase.with(prefix: "record_plan") { scratch, database in
            let key = try await ProofBatcherTests.prepare(["P-0"], in: database)
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                // Autovacuum would otherwise analyse the new rows whenever it next wakes.
                _ = try await owner.query("ALTER TABLE deliveries SET (autovacuum_enabled = false)")
                _ = try await owner.query("""
                    INSERT INTO deliveries (reference, recipient_name, address, status, delivered_at)
                    SELECT 'OLD-' || g, 'R', 'A', 'delivered', now() FROM generate_series(1, 20000) g
                    """)
                _ = try await owner.query("ANALYZE deliveries")
                _ = try await owner.query("""
                    INSERT INTO deliveries (reference, recipient_name, address) SELECT 'NEW-' || g, 'R', 'A' FROM generate_series(1, 5000) g
                    """)
            }
            // NEW-2500 has its data key, as every delivery made since keys come with the delivery;
            // NEW-2501 has none, as one stored before (the upload then inserts its key).
            let sealer = ProofSealer(keys: TestDataKeys.provider)
            let stored = try sealer.newKey(for: "NEW-2500").key
            _ = try await database.query("""
                INSERT INTO delivery_data_keys (delivery_id, kek_id, wrapped_key)
                SELECT id, \(stored.keyID)::text, \(PostgresBytes(stored.wrapped)) FROM deliveries WHERE reference = 'NEW-2500'
                """)
            for (reference, existing) in [("NEW-2500", stored as ProofSealer.WrappedKey?), ("NEW-2501", nil)] {
                let proof = ProofBatcherTests.proof(uploadedBy: key, signer: "Plan")
                let pending = PendingProof(proof: proof, reference: reference,
                                           sealed: try sealer.seal(proof, reference: reference, existing: existing),
                                           idempotency: nil, origin: .system)
                let result = try await database.query("EXPLAIN (ANALYZE, FORMAT JSON) \(ProofRepository.recordStatement(pending))")
                let plan = try result.decode(String.self, row: 0, column: 0)
                let deliveryScans = DeliverySearchTests.nodes(plan).filter { $0.relation == "deliveries" && $0.type.hasSuffix("Scan") }
                #expect(deliveryScans.count == 2, "the lookup by reference and the update by id: \(plan)")
                #expect(deliveryScans.allSatisfy { ($0.rows ?? .max) <= 1 }, "each reads one delivery: \(deliveryScans) \(plan)")
                // The statement ran: the delivery is delivered, with the proof, under the one key.
                let row = try await database.query("""
                    SELECT d.status::text, count(p.id), (SELECT count(*) FROM delivery_data_keys k WHERE k.delivery_id = d.id)
                    FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id
                    WHERE d.reference = \(reference) GROUP BY d.id, d.status
                    """).rows[0]
                #expect(try row.decode(String.self, 0) == "delivered", "\(reference)")
                #expect(try row.decode(Int.self, 1) == 1, "\(reference)")
                #expect(try row.decode(Int.self, 2) == 1, "\(reference)")
            }
        }
    }
}
