import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Issue 19, "two database roles": what the runtime role can and cannot do, on a real PostgreSQL
/// migrated by the owner and granted as `countersign migrate` grants.
@Suite("Runtime role privileges",
       .needsTwoRoles)
struct RuntimeRolePrivilegesTests {
    /// Every table, view, sequence and function of schema public, as the decisions name them.
    static func objects(_ owner: PostgresClient) async throws -> Set<String> {
        let rows = try await owner.query("""
            SELECT CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END || ' ' || c.relname AS object
            FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND NOT c.relispartition
            UNION ALL
            SELECT 'FUNCTION ' || p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
            """).rows
        return Set(try rows.map { try $0.decode(String.self, "object") })
    }

    @Test("every table, sequence and function of schema public has a privilege decision, and every decision an object")
    func everyObjectIsDecided() async throws {
        try await ScratchDatabase.with(prefix: "priv_all") { scratch, _ in
            let owner = scratch.ownerClient(poolSize: 1)
            let found = try await Self.objects(owner)
            await owner.shutdown()
            let decided = Set(RuntimeRolePrivileges.decisions.map { "\($0.kind.rawValue) \($0.name)" })
            #expect(found.subtracting(decided).isEmpty,
                    "objects with no decision in RuntimeRolePrivileges (add one line each): \(found.subtracting(decided).sorted())")
            #expect(decided.subtracting(found).isEmpty, "decisions for objects that do not exist: \(decided.subtracting(found).sorted())")
            #expect(decided.count == RuntimeRolePrivileges.decisions.count, "one decision per object")
        }
    }

    @Test("the runtime role owns nothing and holds no table-wide UPDATE, DELETE, TRUNCATE or TRIGGER anywhere")
    func ownsNothing() async throws {
        try await ScratchDatabase.with(prefix: "priv_own") { scratch, runtime in
            let rows = try await runtime.query("""
                SELECT c.relname || ': ' || p.privilege AS held FROM pg_class c
                CROSS JOIN unnest(ARRAY['UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) p(privilege)
                WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, p.privilege)
                UNION ALL
                SELECT c.relname || ': owner' FROM pg_class c
                WHERE c.relnamespace = 'public'::regnamespace AND pg_has_role(current_user, c.relowner, 'MEMBER')
                UNION ALL
                SELECT 'schema public: CREATE' WHERE has_schema_privilege('public', 'CREATE')
                UNION ALL
                SELECT 'schema extensions: CREATE' WHERE has_schema_privilege('extensions', 'CREATE')
                UNION ALL
                SELECT 'schema extensions: no USAGE (searches name cube there)' WHERE NOT has_schema_privilege('extensions', 'USAGE')
                """).rows
            #expect(try rows.map { try $0.decode(String.self, "held") } == [])
            let check = try await DatabaseRoleCheck.run(on: runtime)
            #expect(check.problems == [] && check.role == scratch.runtimeRole)
        }
    }

    @Test("UPDATE, DELETE, TRUNCATE, DISABLE TRIGGER and DDL on evidence all fail as the runtime role")
    func evidenceCannotBeChanged() async throws {
        try await ScratchDatabase.with(prefix: "priv_tamper") { _, runtime in
            // Real rows, so a statement that got past the privilege check would have something to change.
            let keys = APIKeyRepository(database: runtime)
            let (key, _) = try await keys.create(name: "tamper", role: .admin)
            let deliveries = DeliveryRepository(database: runtime, dataKeys: TestDataKeys.provider)
            _ = try await deliveries.create(NewDelivery(reference: "T-1", recipientName: "R", address: "A", destination: nil),
                                            by: nil)
            let statements: [String] = [
                "UPDATE proofs SET signer_name = 'x'", "DELETE FROM proofs", "TRUNCATE proofs", "TRUNCATE proofs_default",
                "ALTER TABLE proofs DISABLE TRIGGER proofs_immutable",
                "UPDATE audit_events SET subject = 'x'", "DELETE FROM audit_events", "TRUNCATE audit_events",
                "ALTER TABLE audit_events DISABLE TRIGGER ALL", "SELECT * FROM audit_events_default",
                "UPDATE audit_checkpoints SET signature = signature", "DELETE FROM audit_checkpoints", "TRUNCATE audit_checkpoints",
                "ALTER TABLE audit_checkpoints DISABLE TRIGGER ALL",
                "UPDATE deliveries SET reference = 'T-2'", "UPDATE deliveries SET recipient_name = 'x'", "DELETE FROM deliveries",
                "TRUNCATE deliveries CASCADE", "ALTER TABLE deliveries DISABLE TRIGGER deliveries_guard",
                "DELETE FROM audit_chains", "TRUNCATE audit_chains", "ALTER TABLE audit_chains DISABLE TRIGGER ALL",
                "UPDATE api_keys SET revoked_at = NULL", "DELETE FROM api_keys", "TRUNCATE api_keys CASCADE",
                "DELETE FROM idempotency_records", "DELETE FROM schema_migrations",
                "CREATE TABLE proofs_shadow (id int)", "DROP TABLE proofs", "ALTER TABLE proofs ADD COLUMN note text",
                "SELECT * FROM countersign_ensure_monthly_partitions('proofs'::regclass, 3, now() - interval '5 years')",
            ]
            // Refused for want of privilege (42501: permission denied, must be owner, or a guard
            // trigger), not for a typo in the statement.
            for statement in statements {
                let error = await #expect(throws: PostgresError.self, "\(statement) must fail") { try await runtime.query(statement) }
                #expect(error?.sqlState == "42501", "\(statement): \(error.map(String.init(describing:)) ?? "no error")")
            }
            let other = await #expect(throws: PostgresError.self) {
                try await runtime.query("SELECT * FROM countersign_maintain_partitions('deliveries', 1)")
            }
            #expect(other?.sqlState == "22023", "the narrow partition function serves proofs and audit_events only")
            let untouched = try await runtime.query("SELECT count(*) FROM deliveries WHERE reference = 'T-1'").decode(Int.self, row: 0, column: 0)
            #expect(untouched == 1)
            #expect(try await keys.list().map(\.id) == [key.id])
        }
    }

    @Test("keys, idempotency claims and partition upkeep work as the runtime role through their narrow functions")
    func narrowWritesWork() async throws {
        try await ScratchDatabase.with(prefix: "priv_ops") { _, runtime in
            let keys = APIKeyRepository(database: runtime)
            let (key, _) = try await keys.create(name: "ops", role: .courier)
            #expect(try await keys.revoke(id: key.id))
            #expect(try await keys.revoke(id: key.id))  // the second keeps the first time
            #expect(try await !keys.revoke(id: UUID()))
            #expect(try await keys.list().first?.revokedAt != nil)

            let idempotency = IdempotencyRepository(database: runtime)
            let fingerprint = [UInt8](repeating: 7, count: 32)
            #expect(try await idempotency.claim(apiKeyID: key.id, key: "k1", requestSHA256: fingerprint) == .claimed)
            try await idempotency.release(apiKeyID: key.id, key: "k1")
            idempotency.finished(apiKeyID: key.id, key: "k1")
            let left = try await runtime.query("SELECT count(*) FROM idempotency_records").decode(Int.self, row: 0, column: 0)
            #expect(left == 0)

            let outcomes = try await PartitionMaintenance(database: runtime, monthsAhead: 5).run()
            #expect(!outcomes.isEmpty && outcomes.allSatisfy { $0.error == nil }, "\(outcomes)")
        }
    }

    @Test("migrate refuses a runtime role that is missing (without a password), the owner itself, or a bad name")
    func refusals() async throws {
        try await ScratchDatabase.with(prefix: "priv_refuse") { scratch, _ in
            let owner = scratch.ownerClient(poolSize: 1)
            let missing = "countersign_missing_\(UInt32.random(in: 0...UInt32.max))"
            await #expect(throws: RuntimeRoleError.missing(missing)) { try await RuntimeRole(name: missing).apply(on: owner) }
            let ownerName = try #require(URLComponents(string: scratch.ownerURL)?.user)
            await #expect(throws: RuntimeRoleError.isOwner(ownerName)) { try await RuntimeRole(name: ownerName).apply(on: owner) }
            #expect(throws: RuntimeRoleError.invalidName("app; DROP TABLE proofs")) { try RuntimeRole(name: "app; DROP TABLE proofs") }
            await owner.shutdown()
        }
    }

    @Test("with a password, migrate creates the runtime role with LOGIN, and a second run keeps its grants")
    func createsTheRoleWithAPassword() async throws {
        try await ScratchDatabase.with(prefix: "priv_create") { scratch, _ in
            // Creating roles needs CREATEROLE, which the test owner does not have: the superuser stands in for an owner that has it.
            let name = "countersign_made_\(UInt32.random(in: 0...UInt32.max))"
            try await scratch.asSuperuser { admin in
                #expect(try await RuntimeRole(name: name, password: "it's s3cret").apply(on: admin) == .created)
                #expect(try await RuntimeRole(name: name).apply(on: admin) == .existing)
                let row = try await admin.query("""
                    SELECT rolcanlogin AND NOT rolsuper AND rolpassword LIKE 'SCRAM-SHA-256$%' AS ok,
                        has_table_privilege(\(name), 'proofs', 'INSERT') AND NOT has_table_privilege(\(name), 'proofs', 'UPDATE') AS granted
                    FROM pg_authid WHERE rolname = \(name)
                    """).rows[0]
                #expect(try row.decode(Bool.self, "ok") && row.decode(Bool.self, "granted"))
                try await admin.query("DROP OWNED BY \(unescaped: name)")
                try await admin.query("DROP ROLE \(unescaped: name)")
            }
        }
    }
}
