import Foundation
import Postgres

/// The sender's side of the outbox: claims due deliveries, records each attempt, and gives the
/// admin API an endpoint's deliveries and their attempts.
///
/// A claim is one statement: due rows are locked `FOR UPDATE SKIP LOCKED` (so replicas never take
/// the same row) and leased by moving `next_attempt_at` past the attempt's timeout, so no
/// transaction stays open while a receiver answers. A replica that dies mid-post leaves the lease
/// to expire and another replica sends again — at least once, with the same `webhook-id`.
public struct WebhookDeliveryQueue: Sendable {
    let database: PostgresClient

    /// Creates the queue over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// Up to `limit` due deliveries of enabled endpoints, oldest first, each leased for `lease`,
    /// and at most `perEndpoint` for any one endpoint counting the `inFlight` attempts the caller
    /// already has to it (endpoint id → attempts): an endpoint at its cap is skipped, so one whose
    /// receiver hangs cannot take every slot of the sender while other endpoints' deliveries wait
    /// (security issue 41, item 6).
    ///
    /// Each live endpoint's due deliveries are read from its own end of the index
    /// `webhook_deliveries_endpoint_due` (migration 0024), so a long backlog of one endpoint is
    /// never walked to reach another's; endpoints are few (an admin registers each).
    public func claim(limit: Int, perEndpoint: Int? = nil, inFlight: [UUID: Int] = [:],
                      lease: Duration) async throws -> [ClaimedWebhookDelivery] {
        let result = try await database.query(Self.claimStatement(limit: limit, perEndpoint: perEndpoint, inFlight: inFlight, lease: lease))
        return try result.rows.map { row in
            ClaimedWebhookDelivery(
                id: try row.decode("id"), attempts: try row.decode("attempts"), createdAt: try row.decode("created_at"),
                messageID: try row.decode("message_id"), payload: try row.decode("payload"),
                endpointID: try row.decode("endpoint_id"), url: try row.decode("url"), secretSealed: try row.decode("secret_sealed"),
                previousSecretSealed: try row.decode("previous_secret_sealed"), failingSince: try row.decode("failing_since"))
        }
    }

    /// The statement of ``claim(limit:perEndpoint:inFlight:lease:)``.
    ///
    /// The lock is taken inside each endpoint's look-up (`FOR UPDATE … SKIP LOCKED` there), so rows
    /// another replica is claiming are passed over for that endpoint's next ones, and the room left
    /// to an endpoint is its cap less the caller's attempts in flight to it (a JSON object of
    /// counts by id). Candidates beyond `limit` are locked only for the statement's duration.
    static func claimStatement(limit: Int, perEndpoint: Int?, inFlight: [UUID: Int], lease: Duration) -> PostgresQuery {
        let leaseMicros = lease.components.seconds * 1_000_000 + lease.components.attoseconds / 1_000_000_000_000
        let cap = max(0, min(perEndpoint ?? limit, limit))
        let counts = "{" + inFlight.filter { $0.value > 0 }.map { "\"\($0.key.uuidString.lowercased())\":\($0.value)" }
            .sorted().joined(separator: ",") + "}"
        return """
            WITH due AS (
                SELECT c.id FROM webhook_endpoints e
                CROSS JOIN LATERAL (
                    SELECT d.id, d.next_attempt_at, d.event_id FROM webhook_deliveries d
                    WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now()
                    ORDER BY d.next_attempt_at, d.event_id
                    LIMIT greatest(\(cap)::int - coalesce((\(counts)::jsonb ->> e.id::text)::int, 0), 0)
                    FOR UPDATE OF d SKIP LOCKED
                ) c
                WHERE e.enabled AND e.deleted_at IS NULL
                ORDER BY c.next_attempt_at, c.event_id
                LIMIT \(limit)
            ), leased AS (
                UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => \(Double(leaseMicros) / 1_000_000))
                FROM due WHERE d.id = due.id
                RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at
            )
            SELECT leased.id, leased.attempts, leased.created_at, ev.message_id, ev.payload, e.id AS endpoint_id, e.url,
                e.secret_sealed, CASE WHEN e.previous_secret_until > now() THEN e.previous_secret_sealed END AS previous_secret_sealed,
                e.failing_since
            FROM leased JOIN webhook_events ev ON ev.id = leased.event_id JOIN webhook_endpoints e ON e.id = leased.endpoint_id
            ORDER BY leased.event_id
            """
    }

    /// Records one attempt and its consequence, in one transaction: the attempt row; the delivery
    /// succeeded, failed for good, or due again at `outcome.nextAttemptAt`; the endpoint's failure run
    /// ended or extended. When the run has lasted `disableAfter`, the endpoint is disabled and a
    /// `webhook_disabled` audit event says why. Returns whether it was disabled now.
    @discardableResult
    public func record(_ outcome: WebhookAttemptOutcome, for delivery: ClaimedWebhookDelivery,
                       disableAfter: Duration) async throws -> Bool {
        let statement = Self.attemptStatement(outcome, for: delivery, disableSeconds: Double(disableAfter.components.seconds))
        return try await database.withTransaction { session in
            let result = try await session.query(statement)
            guard let row = result.first, try row.decode(Bool.self, "exhausted") else { return false }
            let since: Date? = try row.decode("failing_since")
            try await session.execute("""
                UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', disabled_at = now(), updated_at = now()
                WHERE id = \(delivery.endpointID)
                """)
            try await AuditLog.append(.webhookDisabled, subject: WebhookEndpointRepository.subject(delivery.endpointID),
                                      details: ["failing_since": since.map(WebhookTimestamp.format) ?? "",
                                                "last_error": outcome.error ?? outcome.statusCode.map { "HTTP \($0)" } ?? ""],
                                      origin: .system, in: session)
            return true
        }
    }

    /// The statement ``record(_:for:disableAfter:)`` runs first: the attempt row, the delivery's new
    /// state, the endpoint's failure run; answers whether the endpoint is now exhausted.
    ///
    /// The delivery is updated only while pending, a check written `(state = 'pending') IS TRUE`
    /// so that it filters the row found by primary key. As `state = 'pending'` it let the planner
    /// read the partial index of pending deliveries (`webhook_deliveries_due`) whole, which
    /// statistics from before a backlog (an endpoint down for a while) make look like one row:
    /// each attempt then read every pending delivery, and draining a backlog took time growing
    /// with its square (`WebhookAttemptPlanTests`).
    static func attemptStatement(_ outcome: WebhookAttemptOutcome, for delivery: ClaimedWebhookDelivery,
                                 disableSeconds: Double) -> PostgresQuery {
        let state = outcome.succeeded ? "succeeded" : (outcome.nextAttemptAt == nil ? "failed" : "pending")
        return """
        WITH attempt AS (
            INSERT INTO webhook_attempts (delivery_id, status_code, latency_ms, error)
            VALUES (\(delivery.id), \(outcome.statusCode)::int, \(outcome.latencyMilliseconds), \(outcome.error)::text)
        ), delivered AS (
            UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = now(),
                last_status = \(outcome.statusCode)::int, last_error = \(outcome.error)::text, state = \(state)::text,
                next_attempt_at = coalesce(\(outcome.nextAttemptAt)::timestamptz, next_attempt_at),
                completed_at = CASE WHEN \(state)::text = 'pending' THEN NULL ELSE now() END
            WHERE id = \(delivery.id) AND (state = 'pending') IS TRUE
        )
        UPDATE webhook_endpoints SET
            failing_since = CASE WHEN \(outcome.succeeded) THEN NULL ELSE coalesce(failing_since, now()) END
        WHERE id = \(delivery.endpointID)
        RETURNING enabled AND NOT \(outcome.succeeded)
            AND coalesce(failing_since, now()) <= now() - make_interval(secs => \(disableSeconds)) AS exhausted,
            failing_since
        """
    }

    /// Queues delivery `deliveryID` of endpoint `endpointID` again, now (whatever its state),
    /// audited; false when the endpoint has no such delivery.
    public func retry(_ deliveryID: UUID, endpointID: UUID, origin: AuditOrigin) async throws -> Bool {
        try await database.withTransaction { session in
            let result = try await session.query("""
                UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now(), completed_at = NULL
                WHERE id = \(deliveryID) AND endpoint_id = \(endpointID)
                    AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
                """)
            guard result.affectedRows == 1 else { return false }
            try await session.execute("SELECT pg_notify(\(WebhookOutbox.channel), '')")
            try await AuditLog.append(.webhookDeliveryRetried, subject: WebhookEndpointRepository.subject(endpointID),
                                      details: ["delivery_id": deliveryID.uuidString.lowercased()], origin: origin, in: session)
            return true
        }
    }

    /// The endpoint's deliveries, newest first, each with its attempts (oldest first); `before`
    /// continues a listing after that delivery's creation time.
    public func deliveries(endpointID: UUID, limit: Int, before: Date? = nil) async throws -> [WebhookDeliveryRecord] {
        let result = try await database.query("""
            SELECT d.id, ev.message_id, ev.type, ev.id AS sequence, d.state, d.attempts, d.next_attempt_at, d.created_at,
                d.completed_at, a.attempted_at, a.status_code, a.latency_ms, a.error
            FROM (SELECT * FROM webhook_deliveries WHERE endpoint_id = \(endpointID)
                    AND created_at < coalesce(\(before)::timestamptz, 'infinity')
                  ORDER BY created_at DESC, id LIMIT \(limit)) d
            JOIN webhook_events ev ON ev.id = d.event_id
            LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
            ORDER BY d.created_at DESC, d.id, a.id
            """)
        var records: [WebhookDeliveryRecord] = []
        for row in result.rows {
            let id: UUID = try row.decode("id")
            if records.last?.id != id {
                records.append(WebhookDeliveryRecord(
                    id: id, messageID: try row.decode("message_id"),
                    eventType: try row.decode("type"), sequence: try row.decode("sequence"), state: try row.decode("state"),
                    attemptCount: try row.decode("attempts"), nextAttemptAt: try row.decode("next_attempt_at"),
                    createdAt: try row.decode("created_at"), completedAt: try row.decode("completed_at"), attempts: []))
            }
            if let at: Date = try row.decode("attempted_at") {
                records[records.count - 1].attempts.append(WebhookAttempt(
                    attemptedAt: at, statusCode: try row.decode("status_code"), latencyMilliseconds: try row.decode("latency_ms"),
                    error: try row.decode("error")))
            }
        }
        return records
    }
}
