import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// Migration 0025: the new column is added in the catalog alone (no partition rewritten: a rewrite
/// holds an exclusive lock while it copies every stored body and PNG), and its rules hold.
@Suite("Sealed proofs (0025)", .needsDatabase)
struct SealedProofsMigrationTests {
    @Test("0025 rewrites no proofs partition, validates its sealing rule, and keeps a wrapped key to its 60 bytes")
    func noRewrite() async throws {
        try await ScratchDatabase.with(prefix: "seal_mig", migratedThrough: 24) { _, database, migrations in
            try await database.query("""
                INSERT INTO deliveries (reference, recipient_name, address, status, delivered_at) VALUES ('OLD-1', 'R', 'A', 'pending', NULL)
                """)
            let files = """
                SELECT c.relname::text, pg_relation_filenode(c.oid)::int8 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'proofs'::regclass ORDER BY 1
                """
            let before = try await database.query(PostgresQuery(unescaped: files)).rows.map { try $0.decode((String, Int64).self) }
            #expect(before.count >= 2, "partitions to watch: \(before)")
            #expect(try await MigrationRunner(client: database).migrate(migrations.filter { $0.version <= 25 }).contains(25), "through 0025: 0026 widens the rule (erased = 2)")
            let after = try await database.query(PostgresQuery(unescaped: files)).rows.map { try $0.decode((String, Int64).self) }
            #expect(after.map(\.0) == before.map(\.0) && after.map(\.1) == before.map(\.1), "no partition got a new file: \(before) → \(after)")
            let validated = try await database.query("""
                SELECT convalidated FROM pg_constraint WHERE conname = 'proof_sealing_known' AND contypid = 'proof_sealing'::regtype
                """).decode(Bool.self, row: 0, column: 0)
            #expect(validated)
            let unknown = await #expect(throws: PostgresError.self) {
                try await database.query("SELECT 2::proof_sealing")
            }
            #expect(unknown?.sqlState == "23514", "a sealing other than 0 or 1")
            let refused = await #expect(throws: PostgresError.self) {
                try await database.query("""
                    INSERT INTO delivery_data_keys (delivery_id, kek_id, wrapped_key)
                    SELECT id, 'k1', '\\x00'::bytea FROM deliveries WHERE reference = 'OLD-1'
                    """)
            }
            #expect(refused?.sqlState == "23514", "a wrapped key is 60 bytes")
        }
    }
}
