import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// What a replica still running sees while another one migrates: its connections hold statements prepared against the
/// old schema, and a migration that changes a column's type (as 0011 did, text and bytea to domains) makes every one
/// that returns that column fail once with "cached plan must not change result type".
@Suite("A migration under a running pool", .needsDatabase)
struct MigrationUnderRunningPoolTests {
    @Test("uploads, deliveries and keys keep working on a pool whose prepared statements a type-changing migration made stale")
    func typeChangingMigration() async throws {
        // One connection, so every write below runs on the connection that prepared the statements.
        try await ScratchDatabase.with(prefix: "stale", poolSize: 1) { scratch, database in
            let keys = APIKeyRepository(database: database)
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            let proofs = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
            let (courier, _) = try await keys.create(name: "courier", role: .courier)
            func deliver(_ reference: String) async throws {
                let draft = NewDelivery(reference: reference, recipientName: "R", address: "X", destination: nil)
                guard case .created = try await deliveries.create(draft, by: nil) else { throw PostgresError(.queryFailed, message: "not created") }
                try await proofs.record(PartitionedProofsTests.proof(receivedAt: Date(), uploadedBy: courier.id), reference: reference)
            }
            try await deliver("BEFORE-1")

            // The migration, from another session: binary-coercible type changes (no rewrite) of columns that the
            // audit append's chain lock and the key insert return.
            try await scratch.asSuperuser { admin in
                _ = try await admin.query("CREATE DOMAIN stale_test_hash AS bytea")
                _ = try await admin.query("ALTER TABLE audit_chains ALTER COLUMN head_hash TYPE stale_test_hash")
                _ = try await admin.query("CREATE DOMAIN stale_test_name AS text")
                _ = try await admin.query("ALTER TABLE api_keys ALTER COLUMN name TYPE stale_test_name")
            }

            // Each transaction runs again with its statements prepared afresh, instead of failing once per statement.
            try await deliver("AFTER-1")
            let (second, _) = try await keys.create(name: "second courier", role: .courier)
            #expect(try await keys.revoke(id: second.id))
            try await deliver("AFTER-2")

            #expect(try await database.query("SELECT count(*) FROM proofs").decode(Int.self, row: 0, column: 0) == 3)
            #expect(try await database.query("SELECT count(*) FROM api_keys").decode(Int.self, row: 0, column: 0) == 2)
            guard case .ok(let events, _, _) = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() else {
                Issue.record("the audit chains do not verify")
                return
            }
            // 2 keys created, 1 revoked, 3 deliveries and 3 proofs: each once, none from a failed attempt.
            #expect(events == 9)
        }
    }
}
