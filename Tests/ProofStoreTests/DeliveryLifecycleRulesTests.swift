import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Migration 0014's rules, straight from SQL as the service's role (no service code in between):
/// the database itself refuses illegal transitions and changes to attempts.
@Suite("Delivery lifecycle rules (0014)", .needsDatabase)
struct DeliveryLifecycleRulesTests {
    /// Inserts a failed attempt for `reference` by `key` (plain SQL, every column the service writes).
    static func insertAttempt(_ database: PostgresClient, _ reference: String, key: UUID) async throws {
        try await database.query("""
            INSERT INTO delivery_attempts (id, delivery_id, outcome, reason, captured_at, captured_at_offset_min, captured_at_text,
                received_at, geofence_radius_m, recorded_by)
            SELECT gen_random_uuid(), id, 'failed', 'refused', now(), 60, '2025-03-01T10:00:00+01:00', now(), 200, \(key)
            FROM deliveries WHERE reference = \(reference)::text
            """)
    }

    /// Closes `reference` as the key whose token is `key.token` (the function finds the key: 0023).
    static func close(_ database: PostgresClient, _ reference: String, _ status: String, key: DispatcherKey) async throws -> PostgresResult {
        try await database.query("""
            SELECT * FROM countersign_close_delivery(\(reference)::text, \(status)::text, 'because'::text, \(key.token)::text, now())
            """)
    }

    /// The dispatcher key of ``withDeliveries(_:)``: its id and its token.
    struct DispatcherKey: Sendable {
        let id: UUID
        let token: String
    }

    /// Expects `body` to fail as an illegal transition: SQLSTATE 23514 on `delivery_transition`.
    static func expectTransitionRefused(_ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(what) was allowed")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23514", "\(what): \(error)")
            #expect(error.constraint == "delivery_transition", "\(what): \(error)")
        } catch {
            Issue.record("\(what) failed with \(error)")
        }
    }

    /// The runtime role may not write a delivery's closing columns at all (42501): only
    /// `countersign_close_delivery` does. The owner, who can, still meets the trigger (23514).
    static func expectClosingColumnsRefused(_ what: String, scratch: ScratchDatabase, database: PostgresClient, _ sql: String) async throws {
        do {
            try await database.query("\(unescaped: sql)")
            Issue.record("\(what) was allowed to the runtime role")
        } catch let error as PostgresError {
            #expect(error.sqlState == "42501" || error.sqlState == "23514", "\(what) as the runtime role: \(error)")
        }
        try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
            await expectTransitionRefused("\(what) as the owner") { try await owner.query("\(unescaped: sql)") }
        }
    }

    static func withDeliveries(_ body: (PostgresClient, DispatcherKey, ScratchDatabase) async throws -> Void) async throws {
        try await ScratchDatabase.with(prefix: "lifecycle") { scratch, database in
            let (key, token) = try await APIKeyRepository(database: database).create(name: "dispatch", role: .dispatcher)
            for reference in ["P-1", "D-1", "C-1", "F-1"] {
                try await database.query("""
                    INSERT INTO deliveries (reference, recipient_name, address) VALUES (\(reference)::text, 'R', 'A')
                    """)
            }
            try await database.query("UPDATE deliveries SET status = 'delivered', delivered_at = now() WHERE reference = 'D-1'")
            try await body(database, DispatcherKey(id: key.actor.keyID, token: token), scratch)
        }
    }

    @Test("pending takes attempts and closes once; closed and delivered deliveries refuse every transition")
    func transitions() async throws {
        try await Self.withDeliveries { database, key, scratch in
            try await Self.insertAttempt(database, "P-1", key: key.id)
            try await Self.insertAttempt(database, "P-1", key: key.id)
            #expect(try await Self.close(database, "C-1", "cancelled", key: key).rowCount == 1)
            #expect(try await Self.close(database, "F-1", "failed", key: key).rowCount == 1)
            #expect(try await Self.close(database, "NOPE", "cancelled", key: key).rowCount == 0)

            await Self.expectTransitionRefused("cancel twice") { _ = try await Self.close(database, "C-1", "cancelled", key: key) }
            await Self.expectTransitionRefused("fail a cancelled delivery") { _ = try await Self.close(database, "C-1", "failed", key: key) }
            await Self.expectTransitionRefused("cancel a delivered delivery") { _ = try await Self.close(database, "D-1", "cancelled", key: key) }
            await Self.expectTransitionRefused("close as delivered") { _ = try await Self.close(database, "P-1", "delivered", key: key) }
            await Self.expectTransitionRefused("deliver a cancelled delivery") {
                try await database.query("UPDATE deliveries SET status = 'delivered', delivered_at = now() WHERE reference = 'C-1'")
            }
            try await Self.expectClosingColumnsRefused("reopen a failed delivery", scratch: scratch, database: database,
                "UPDATE deliveries SET status = 'pending', closed_at = NULL, close_reason = NULL WHERE reference = 'F-1'")
            try await Self.expectClosingColumnsRefused("edit a cancelled delivery's reason", scratch: scratch, database: database,
                "UPDATE deliveries SET close_reason = 'other' WHERE reference = 'C-1'")
            try await Self.expectClosingColumnsRefused("cancel a delivered delivery by UPDATE", scratch: scratch, database: database,
                "UPDATE deliveries SET status = 'cancelled', closed_at = now(), close_reason = 'x', delivered_at = NULL WHERE reference = 'D-1'")
            for reference in ["D-1", "C-1", "F-1"] {
                await Self.expectTransitionRefused("attempt on \(reference)") { try await Self.insertAttempt(database, reference, key: key.id) }
            }
            let statuses = try await database.query("SELECT reference::text, status::text FROM deliveries ORDER BY reference").rows
                .map { try $0.decode((String, String).self) }
            #expect(statuses.map { "\($0.0)=\($0.1)" } == ["C-1=cancelled", "D-1=delivered", "F-1=failed", "P-1=pending"])
            let count = try await database.query("SELECT count(*) FROM delivery_attempts").decode(Int.self, row: 0, column: 0)
            #expect(count == 2)
        }
    }

    @Test("a closed delivery states when and why; a status without them is refused by the table")
    func closedFacts() async throws {
        try await Self.withDeliveries { database, _, _ in
            do {
                try await database.query("UPDATE deliveries SET status = 'cancelled' WHERE reference = 'P-1'")
                Issue.record("a cancellation without its reason was stored")
            } catch let error as PostgresError {
                #expect(error.kind == .checkViolation)
                #expect(error.constraint == "deliveries_closed_facts")
            }
        }
    }

    @Test("attempts are append-only: UPDATE, DELETE and TRUNCATE are refused", arguments: [
        "UPDATE delivery_attempts SET note = 'changed'", "DELETE FROM delivery_attempts", "TRUNCATE delivery_attempts",
    ])
    func appendOnly(_ sql: String) async throws {
        try await Self.withDeliveries { database, key, scratch in
            try await Self.insertAttempt(database, "P-1", key: key.id)
            do {
                try await database.query(sql, [])
                Issue.record("\(sql) was allowed")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42501", "\(sql): \(error)")
            }
            #expect(try await database.query("SELECT count(*) FROM delivery_attempts").decode(Int.self, row: 0, column: 0) == 1)
        }
    }

    @Test("an attempt waits for a concurrent cancel of its delivery and is then refused")
    func attemptSerialisedWithCancel() async throws {
        try await Self.withDeliveries { database, key, scratch in
            let attempt = try await database.withTransaction { session in
                _ = try await session.query("""
                    SELECT * FROM countersign_close_delivery('P-1'::text, 'cancelled'::text, 'because'::text, \(key.token)::text, now())
                    """)
                // While the cancel is uncommitted, an attempt from another connection blocks on the
                // delivery row (seen in pg_stat_activity, not guessed from time); it is judged once
                // the cancel commits, when this body returns.
                let attempt = Task { try await Self.insertAttempt(database, "P-1", key: key.id) }
                while try await database.query("""
                    SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """).decode(Int.self, row: 0, column: 0) == 0 {
                    await Task.yield()
                }
                return attempt
            }
            await Self.expectTransitionRefused("attempt racing a cancel") { try await attempt.value }
        }
    }
}
