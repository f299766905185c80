import Foundation
import Postgres

/// The transactional outbox of webhook events (migration 0015).
///
/// ``enqueue(_:in:)`` writes the event in the caller's transaction, so the event exists if and only
/// if the change it reports commits; a rolled-back change leaves no event and sends nothing. The
/// same statement fans the event out to every live endpoint subscribed to its type (one
/// `webhook_deliveries` row each, the sender's queue; its insert trigger NOTIFYs the senders at
/// commit). It costs the caller no round trip: the statement is queued and goes to the server
/// with the transaction's next statement or its `COMMIT`, where an error would surface.
public enum WebhookOutbox {
    /// The channel the queue's insert trigger notifies (migration 0015).
    public static let channel = "countersign_webhooks"

    /// Queues `event` in the transaction `session` is in. Use it from every use case whose change
    /// should be announced (delivery attempts, cancellation), inside that change's transaction.
    public static func enqueue(_ event: WebhookEvent, in session: PostgresSession) {
        session.enqueue(statement(event))
    }

    /// The one statement: draw the id (it is also the payload's `sequence`), store the exact
    /// payload text that will be signed and sent, and queue it for each subscribed endpoint — or
    /// nothing at all when no endpoint is subscribed, so a deployment without webhooks pays only
    /// the look-up.
    static func statement(_ event: WebhookEvent) -> PostgresQuery {
        let type = event.type.rawValue
        return """
            WITH drawn AS (
                SELECT nextval('webhook_events_id_seq') AS id, gen_random_uuid() AS message_id, now() AS at,
                    (SELECT id FROM deliveries WHERE reference = \(event.deliveryReference)::text) AS delivery_id
                -- No live endpoint wants it: no event row (endpoints added later only see later events).
                WHERE EXISTS (SELECT 1 FROM webhook_endpoints endpoint WHERE endpoint.deleted_at IS NULL
                    AND CASE WHEN \(event.endpointID)::uuid IS NULL THEN endpoint.events @> ARRAY[\(type)::text]
                             ELSE endpoint.id = \(event.endpointID)::uuid END)
            ), event AS (
                INSERT INTO webhook_events (id, message_id, type, delivery_id, endpoint_id, occurred_at, payload)
                SELECT drawn.id, drawn.message_id, \(type)::text, drawn.delivery_id, \(event.endpointID)::uuid, drawn.at,
                    jsonb_build_object(
                        'type', \(type)::text,
                        'timestamp', to_char(drawn.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                        'data', \(event.dataJSON)::jsonb || jsonb_build_object('sequence', drawn.id)
                    )::text
                FROM drawn
                RETURNING id
            )
            INSERT INTO webhook_deliveries (event_id, endpoint_id)
            SELECT event.id, endpoint.id FROM event JOIN webhook_endpoints endpoint
                ON endpoint.deleted_at IS NULL
                AND CASE WHEN \(event.endpointID)::uuid IS NULL THEN endpoint.events @> ARRAY[\(type)::text]
                         ELSE endpoint.id = \(event.endpointID)::uuid END
            """
    }
}
