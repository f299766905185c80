import Foundation
import Postgres

/// The checks of a delivery's life besides its proof: every `delivery_attempt_recorded` event's
/// attempt must still give the `attempt_commitment` (or, older, `attempt_sha256`) it bound, every
/// `delivery_failed` / `delivery_cancelled` event's delivery the `closure_commitment` (or
/// `closure_sha256`), and every stored attempt must have an event (one inserted behind the
/// service's back has none).
extension AuditVerifier {
    /// Digests re-derived from the rows the events of one page name.
    struct LifecycleDigests {
        /// ``AttemptFacts/digest`` of each attempt (and its commitment), by attempt id.
        var attempts: [UUID: BoundFacts] = [:]
        /// ``ClosureFacts/digest`` of each closed delivery (and its commitment), by delivery id.
        var closures: [UUID: BoundFacts] = [:]
    }

    static let closingActions: Set<String> = [AuditAction.deliveryFailed.rawValue, AuditAction.deliveryCancelled.rawValue]

    /// The digests of the attempts and closed deliveries `events` name.
    func lifecycleDigests(for events: [AuditEvent], in session: PostgresSession) async throws -> LifecycleDigests {
        var digests = LifecycleDigests()
        let attemptIDs = events.filter { $0.action == AuditAction.attemptRecorded.rawValue }.compactMap { $0.details["attempt_id"] }
            .filter { UUID(uuidString: $0) != nil }
        if !attemptIDs.isEmpty {
            let rows = try await session.query("""
                SELECT \(unescaped: AttemptFacts.columns), k.kek_id, k.wrapped_key
                FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id LEFT JOIN delivery_data_keys k ON k.delivery_id = d.id
                WHERE a.id = ANY(string_to_array(\(attemptIDs.joined(separator: ",")), ',')::uuid[]) AND d.erased_at IS NULL
                """).rows
            for row in rows {
                let facts = try AttemptFacts(row: row)
                digests.attempts[facts.attemptID] = try BoundFacts(digest: facts.digest, salt: try salt(row, reference: facts.reference))
            }
        }
        let deliveryIDs = events.filter { Self.closingActions.contains($0.action) }.compactMap { $0.details["delivery_id"] }
            .filter { UUID(uuidString: $0) != nil }
        if !deliveryIDs.isEmpty {
            let rows = try await session.query("""
                SELECT d.id, d.reference::text AS reference, d.status::text AS status, d.close_reason,
                    (extract(epoch FROM d.closed_at) * 1000000)::int8 AS closed_at_us, d.closed_by, k.kek_id, k.wrapped_key
                FROM deliveries d LEFT JOIN delivery_data_keys k ON k.delivery_id = d.id
                WHERE d.id = ANY(string_to_array(\(deliveryIDs.joined(separator: ",")), ',')::uuid[]) AND d.closed_at IS NOT NULL
                    AND d.erased_at IS NULL
                """).rows
            for row in rows {
                let reference: String = try row.decode("reference")
                digests.closures[try row.decode("id")] = try BoundFacts(
                    digest: ClosureFacts.digest(reference: reference, status: try row.decode("status"), reason: try row.decode("close_reason"),
                                                closedAtMicros: try row.decode("closed_at_us"), closedBy: try row.decode("closed_by")),
                    salt: try salt(row, reference: reference))
            }
        }
        return digests
    }

    /// The attempt or closure check of `event` (nil for other actions, or when it holds).
    func checkLifecycle(_ event: AuditEvent, digests: LifecycleDigests) -> AuditBreak? {
        let details = event.details
        if event.action == AuditAction.attemptRecorded.rawValue {
            let id = details["attempt_id"] ?? ""
            return compare(event, "attempt", facts: UUID(uuidString: id).flatMap { digests.attempts[$0] }, kind: .attemptMismatch,
                           missing: "no attempt \(id)")
        }
        if Self.closingActions.contains(event.action) {
            let id = details["delivery_id"] ?? ""
            return compare(event, "closure", facts: UUID(uuidString: id).flatMap { digests.closures[$0] }, kind: .closureMismatch,
                           missing: "no closed delivery \(id)")
        }
        return nil
    }

    /// A break of `kind` unless `facts` give what the event bound under `name` (an event that
    /// binds neither a commitment nor a digest is a break too: these events always bound one).
    private func compare(_ event: AuditEvent, _ name: String, facts: BoundFacts?, kind: AuditBreak.Kind, missing: String) -> AuditBreak? {
        let expected = BoundFacts.recorded(event.details, name)
        let found = facts?.compare(event.details, name)?.found
        guard let found, found == expected else {
            return AuditBreak(seq: event.seq, kind: kind, expected: expected, found: found ?? (facts == nil ? missing : Self.noSalt),
                              subject: event.subject, chain: event.chain)
        }
        return nil
    }

    /// Every stored attempt has a `delivery_attempt_recorded` event (`attempt_without_event`); an
    /// incremental run (`since` the trusted checkpoint's signing time and lowest head) looks only
    /// at attempts received since and events after that head, as it does for proofs, so that a
    /// daily run does not read the whole history of attempts and their events.
    func checkEveryAttemptHasEvent(in session: PostgresSession, since: (micros: Int64, seq: Int64) = (0, 0)) async throws -> AuditBreak? {
        let receivedFrom = AuditTimestamp(micros: since.micros)
        guard let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query("""
                SELECT a.id::text AS id, a.delivery_id FROM delivery_attempts a
                WHERE a.received_at >= \(receivedFrom) AND NOT EXISTS (SELECT 1 FROM audit_events e
                    WHERE e.seq > \(since.seq) AND e.action = 'delivery_attempt_recorded' AND e.details ->> 'attempt_id' = a.id::text)
                LIMIT 1
                """).first
        }) else { return nil }
        return AuditBreak(seq: 0, kind: .attemptWithoutEvent, expected: "a delivery_attempt_recorded event",
                          found: "none for attempt " + (try row.decode(String.self, "id")),
                          subject: "delivery:" + (try await Self.reference(of: try row.decode("delivery_id"), in: session)))
    }
}
