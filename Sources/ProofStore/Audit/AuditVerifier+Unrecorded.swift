import Foundation
import Postgres

/// The changes the runtime role can make without the service, found by what is missing: every
/// closed delivery has its `delivery_failed` / `delivery_cancelled` event (`closure_without_event`:
/// `countersign_close_delivery` called directly), every delivered delivery a `proof_recorded`
/// event under its subject (`delivered_without_proof`: the runtime role's UPDATE of `status`),
/// and every API key its `key_created` event (`key_without_event`: an INSERT into `api_keys`).
/// Keys made before the audit log existed (migration 0003) had no event to get, and are skipped.
/// An incremental run (`since`) looks only at rows changed since the trusted checkpoint was signed,
/// against events after its lowest head, as the proof and attempt checks do.
extension AuditVerifier {
    func checkEveryChangeHasEvent(in session: PostgresSession, since: (micros: Int64, seq: Int64) = (0, 0)) async throws -> AuditBreak? {
        let from = AuditTimestamp(micros: since.micros)
        if let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query("""
                SELECT d.reference::text AS reference, d.status::text AS status FROM deliveries d
                WHERE d.closed_at IS NOT NULL AND d.closed_at >= \(from) AND NOT EXISTS (SELECT 1 FROM audit_events e
                    WHERE e.seq > \(since.seq) AND e.action IN ('delivery_failed', 'delivery_cancelled')
                      AND e.details ->> 'delivery_id' = d.id::text)
                LIMIT 1
                """).first
        }) {
            let status: String = try row.decode("status")
            return AuditBreak(seq: 0, kind: .closureWithoutEvent, expected: "a delivery_\(status == "failed" ? "failed" : "cancelled") event",
                              found: "none for the \(status) delivery", subject: "delivery:" + (try row.decode(String.self, "reference")))
        }
        if let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query("""
                SELECT d.reference::text AS reference FROM deliveries d
                WHERE d.status = 'delivered' AND d.delivered_at >= \(from) AND NOT EXISTS (SELECT 1 FROM audit_events e
                    WHERE e.seq > \(since.seq) AND e.action = 'proof_recorded' AND e.subject = 'delivery:' || d.reference)
                LIMIT 1
                """).first
        }) {
            return AuditBreak(seq: 0, kind: .deliveredWithoutProof, expected: "a proof_recorded event",
                              found: "none for the delivered delivery", subject: "delivery:" + (try row.decode(String.self, "reference")))
        }
        if let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query("""
                SELECT k.id::text AS id, k.role FROM api_keys k
                WHERE k.created_at >= \(from)
                  AND k.created_at >= coalesce((SELECT m.applied_at FROM schema_migrations m WHERE m.version = 3), '-infinity')
                  AND NOT EXISTS (SELECT 1 FROM audit_events e
                    WHERE e.seq > \(since.seq) AND e.action = 'key_created' AND e.subject = 'key:' || k.id::text)
                LIMIT 1
                """).first
        }) {
            let id: String = try row.decode("id")
            return AuditBreak(seq: 0, kind: .keyWithoutEvent, expected: "a key_created event",
                              found: "none for the \(try row.decode(String.self, "role")) key", subject: "key:" + id)
        }
        return nil
    }
}
