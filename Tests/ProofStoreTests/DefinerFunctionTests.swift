import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Issue 41, finding 1: the SECURITY DEFINER functions run as the owner, so nothing the runtime
/// role can create may stand in for a relation they name (migration 0023), and they take no
/// actor or time the service could not have given.
@Suite("SECURITY DEFINER functions (0023)",
       .needsTwoRoles)
struct DefinerFunctionTests {
    /// The attack of the finding: a temporary `deliveries` with a trigger that, run as whoever
    /// updates the row, creates `public.marker`.
    static let attack = [
        """
        CREATE TEMP TABLE deliveries (id uuid, reference text, status text, closed_at timestamptz, close_reason text,
            closed_by uuid, updated_at timestamptz)
        """,
        "INSERT INTO pg_temp.deliveries VALUES (gen_random_uuid(), 'DECOY', 'pending', NULL, NULL, NULL, now())",
        """
        CREATE FUNCTION pg_temp.p() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN
            EXECUTE 'CREATE TABLE public.marker AS SELECT 1'; RETURN NEW; END$$
        """,
        "CREATE TRIGGER t BEFORE UPDATE ON pg_temp.deliveries FOR EACH ROW EXECUTE FUNCTION pg_temp.p()",
    ]

    /// Expects `body` to be refused as a check violation (23514) on `constraint`.
    static func expectRefused(_ what: String, constraint: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(what) was allowed")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23514" && error.constraint == constraint, "\(what): \(error)")
        } catch {
            Issue.record("\(what) failed with \(error)")
        }
    }

    /// `name: relation` for every relation of public named after FROM, JOIN, UPDATE, INTO or TABLE
    /// without a schema before it, in the body of a definer function of public.
    static func unqualifiedRelations(_ owner: PostgresClient) async throws -> [String] {
        try await owner.query("""
            SELECT p.oid::regprocedure::text || ': ' || m[2] AS found
            FROM pg_proc p CROSS JOIN LATERAL regexp_matches(p.prosrc,
                '(?:^|[^a-z0-9_.])(from|join|update|into|table)\\s+([a-z_][a-z0-9_]*)(?![a-z0-9_]*\\s*[.(])', 'gi') m
            WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef
              AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relname = lower(m[2]))
            ORDER BY 1
            """).rows.map { try $0.decode(String.self, "found") }
    }

    static func markerExists(_ database: PostgresClient) async throws -> Bool {
        try await database.query("SELECT to_regclass('public.marker') IS NOT NULL AS found").decode(Bool.self, row: 0, column: "found")
    }

    @Test("every definer function of public sets a search_path that ends with pg_temp and names no relation without its schema")
    func everyDefinerFunctionIsPinned() async throws {
        try await ScratchDatabase.with(prefix: "definer_catalog") { scratch, _ in
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                let functions = try await owner.query("""
                    SELECT p.oid::regprocedure::text AS name, coalesce(array_to_string(p.proconfig, ' '), '') AS config
                    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef ORDER BY 1
                    """).rows.map { (try $0.decode(String.self, "name"), try $0.decode(String.self, "config")) }
                #expect(functions.count >= 10, "the definer functions of 0012–0022: \(functions.map(\.0))")
                for (name, config) in functions {
                    let pinned = config.contains("search_path=pg_catalog, public, pg_temp") || config == "search_path=pg_catalog"
                    #expect(pinned, "\(name) runs with \(config.isEmpty ? "the caller's search_path" : config)")
                }
                let unqualified = Array(Set(try await Self.unqualifiedRelations(owner))).sorted()
                #expect(unqualified == [], "relations named without public.: \(unqualified)")
            }
        }
    }

    @Test("the check above finds an unqualified relation and an unpinned search_path when a function has them")
    func theCatalogCheckCanFail() async throws {
        try await ScratchDatabase.with(prefix: "definer_negative") { scratch, _ in
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                try await owner.query("""
                    CREATE FUNCTION countersign_test_unpinned() RETURNS bigint LANGUAGE sql SECURITY DEFINER
                    SET search_path = pg_catalog, public AS $$ SELECT count(*) FROM deliveries $$
                    """)
                // The very check of the test above, on the same catalog.
                let found = try await Self.unqualifiedRelations(owner).filter { $0.hasPrefix("countersign_test_unpinned()") }.count
                #expect(found == 1)
                let config = try await owner.query("""
                    SELECT array_to_string(proconfig, ' ') AS config FROM pg_proc WHERE proname = 'countersign_test_unpinned'
                    """).decode(String.self, row: 0, column: "config")
                #expect(!config.contains("pg_temp"))
            }
        }
    }

    @Test("the runtime role may not create a temporary table, and serve's role check would refuse it if it could")
    func noTemporaryTables() async throws {
        try await ScratchDatabase.with(prefix: "definer_temp") { scratch, runtime in
            do {
                try await runtime.query("\(unescaped: Self.attack[0])")
                Issue.record("the runtime role created a temporary table")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42501", "\(error)")
            }
            #expect(try await DatabaseRoleCheck.run(on: runtime).problems == [])
            _ = try await scratch.asSuperuser { admin in
                try await admin.query("GRANT TEMPORARY ON DATABASE \(unescaped: scratch.name) TO \(unescaped: scratch.runtimeRole)")
            }
            let check = try await PostgresClient.withClient(.forTests(url: scratch.url, poolSize: 1)) { fresh in
                try await DatabaseRoleCheck.run(on: fresh)
            }
            #expect(check.problems.contains { $0.contains("temporary tables") }, "\(check.problems)")
        }
    }

    @Test("with TEMPORARY granted back, the pg_temp attack on countersign_close_delivery still runs nothing as the owner")
    func pgTempAttackFails() async throws {
        try await ScratchDatabase.with(prefix: "definer_attack") { scratch, _ in
            _ = try await scratch.asSuperuser { admin in
                try await admin.query("GRANT TEMPORARY ON DATABASE \(unescaped: scratch.name) TO \(unescaped: scratch.runtimeRole)")
            }
            // One connection: temporary objects live in their session.
            try await PostgresClient.withClient(.forTests(url: scratch.url, poolSize: 1)) { attacker in
                let (_, token) = try await APIKeyRepository(database: attacker).create(name: "dispatch", role: .dispatcher)
                try await attacker.query("INSERT INTO deliveries (reference, recipient_name, address) VALUES ('DECOY', 'R', 'A')")
                for statement in Self.attack { try await attacker.query("\(unescaped: statement)") }
                let closed = try await attacker.query("""
                    SELECT * FROM countersign_close_delivery('DECOY', 'cancelled', 'x', \(token)::text, now())
                    """)
                #expect(closed.rowCount == 1, "the real delivery DECOY is closed, not the temporary one")
                #expect(try await Self.markerExists(attacker) == false, "the temporary table's trigger ran as the owner")
                let temporary = try await attacker.query("SELECT status FROM pg_temp.deliveries").decode(String.self, row: 0, column: "status")
                #expect(temporary == "pending")
            }
        }
    }

    @Test("countersign_close_delivery acts as the key whose token it is given, never an id, and refuses a time away from the database's clock")
    func closingFindsTheCaller() async throws {
        try await ScratchDatabase.with(prefix: "definer_close") { _, runtime in
            let keys = APIKeyRepository(database: runtime)
            let (dispatcher, dispatcherToken) = try await keys.create(name: "dispatch", role: .dispatcher)
            let (_, courierToken) = try await keys.create(name: "courier", role: .courier)
            let (_, auditorToken) = try await keys.create(name: "auditor", role: .auditor)
            let (admin, revokedToken) = try await keys.create(name: "gone", role: .admin)
            _ = try await keys.revoke(id: admin.actor.keyID)
            try await runtime.query("INSERT INTO deliveries (reference, recipient_name, address) VALUES ('C-1', 'R', 'A')")
            func close(with credential: String?, at time: String) async throws {
                try await runtime.query("""
                    SELECT * FROM countersign_close_delivery('C-1', 'cancelled', 'x', \(credential)::text, \(unescaped: time))
                    """)
            }
            // What the runtime role can read of a key (its id and its token's digest) is no credential.
            let digest = try await runtime.query("SELECT encode(token_sha256, 'hex') AS d FROM api_keys WHERE id = \(dispatcher.actor.keyID)")
                .decode(String.self, row: 0, column: "d")
            let refusals: [(String, String?, String, String)] = [
                ("backdated to 1999", dispatcherToken, "'1999-01-01T00:00:00Z'::timestamptz", "closing_time_now"),
                ("an hour ahead", dispatcherToken, "now() + interval '1 hour'", "closing_time_now"),
                ("by a courier", courierToken, "now()", "closing_key_allowed"),
                ("by an auditor", auditorToken, "now()", "closing_key_allowed"),
                ("by a revoked admin", revokedToken, "now()", "closing_key_allowed"),
                ("by the dispatcher's id", dispatcher.actor.keyID.uuidString.lowercased(), "now()", "closing_key_allowed"),
                ("by the dispatcher's token digest", digest, "now()", "closing_key_allowed"),
                ("with no credential", nil, "now()", "closing_key_allowed"),
            ]
            for (what, key, time, constraint) in refusals {
                await Self.expectRefused("closing \(what)", constraint: constraint) { try await close(with: key, at: time) }
            }
            let status = try await runtime.query("SELECT status FROM deliveries WHERE reference = 'C-1'").decode(String.self, row: 0, column: "status")
            #expect(status == "pending")
            try await close(with: dispatcherToken, at: "now() - interval '1 minute'")
            let closed = try await runtime.query("SELECT status, closed_by FROM deliveries WHERE reference = 'C-1'").rows[0]
            #expect(try closed.decode(String.self, "status") == "cancelled")
            #expect(try closed.decode(UUID.self, "closed_by") == dispatcher.actor.keyID, "the key the token belongs to")
        }
    }

    @Test("device keys are approved and revoked only as the live dispatcher or admin key whose token is given")
    func deviceKeyChangesFindTheCaller() async throws {
        try await ScratchDatabase.with(prefix: "definer_device") { _, runtime in
            let keys = APIKeyRepository(database: runtime)
            let (courier, courierToken) = try await keys.create(name: "courier", role: .courier)
            let (admin, adminToken) = try await keys.create(name: "admin", role: .admin)
            let device = UUID()
            try await runtime.query("""
                INSERT INTO device_keys (id, public_key, label, registered_by)
                VALUES (\(device), decode(repeat('ab', 32), 'hex'), 'phone', \(courier.actor.keyID))
                """)
            for (function, actor) in [("countersign_approve_device_key", courierToken),
                                      ("countersign_approve_device_key", admin.actor.keyID.uuidString.lowercased()),
                                      ("countersign_revoke_device_key", UUID().uuidString)] {
                await Self.expectRefused("\(function) by \(actor)", constraint: "device_key_actor_allowed") {
                    try await runtime.query("SELECT \(unescaped: function)(\(device), \(actor)::text) AS outcome")
                }
            }
            let outcome = try await runtime.query("SELECT countersign_approve_device_key(\(device), \(adminToken)::text) AS outcome")
                .decode(String.self, row: 0, column: "outcome")
            #expect(outcome == "approved_now")
            let approvedBy = try await runtime.query("SELECT approved_by FROM device_keys WHERE id = \(device)").decode(UUID.self, row: 0, column: "approved_by")
            #expect(approvedBy == admin.actor.keyID)
        }
    }
}
