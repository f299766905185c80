import Foundation
import Postgres

/// Stores webhook endpoints. Every admin change commits with its audit event (subject
/// `webhook:<uuid>`), in one transaction.
public struct WebhookEndpointRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    static let columns = """
        id, url, description, array_to_string(events, ',') AS events, secret_sealed, previous_secret_sealed,
        previous_secret_until, enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at
        """

    static func subject(_ id: UUID) -> String { "webhook:\(id.uuidString.lowercased())" }

    /// Stores a new endpoint whose secret was sealed for `id`. The audit event keeps the URL
    /// without its query, fragment and userinfo (``WebhookAuditURL``).
    public func create(id: UUID, url: String, description: String, events: [WebhookEventType], secretSealed: [UInt8],
                       origin: AuditOrigin) async throws -> WebhookEndpoint {
        let eventList = events.map(\.rawValue).joined(separator: ",")
        let audited = WebhookAuditURL.details(url).merging(["events": eventList]) { kept, _ in kept }
        return try await database.withTransaction { session in
            let result = try await session.query("""
                INSERT INTO webhook_endpoints (id, url, description, events, secret_sealed, created_by)
                VALUES (\(id), \(url), \(description), string_to_array(\(eventList)::text, ','), \(secretSealed), \(origin.actor?.keyID))
                RETURNING \(unescaped: Self.columns)
                """)
            try await AuditLog.append(.webhookCreated, subject: Self.subject(id), details: audited,
                                      origin: origin, in: session)
            guard let row = result.first else { throw PostgresError(.decodingFailed, message: "the endpoint insert returned no row") }
            return try Self.endpoint(row)
        }
    }

    /// The endpoint `id`, unless deleted.
    public func find(_ id: UUID) async throws -> WebhookEndpoint? {
        try await database.query("""
            SELECT \(unescaped: Self.columns) FROM webhook_endpoints WHERE id = \(id) AND deleted_at IS NULL
            """).first.map(Self.endpoint)
    }

    /// Every endpoint not deleted, oldest first.
    public func list() async throws -> [WebhookEndpoint] {
        try await database.query("""
            SELECT \(unescaped: Self.columns) FROM webhook_endpoints WHERE deleted_at IS NULL ORDER BY created_at, id
            """).rows.map(Self.endpoint)
    }

    /// Applies `change`; nil when there is no such endpoint. Re-enabling clears the failure run, so
    /// the sender starts afresh; the endpoint's pending deliveries flow again. A new URL is audited
    /// as ``create(id:url:description:events:secretSealed:origin:)`` audits it.
    public func update(_ id: UUID, _ change: WebhookEndpointChange, origin: AuditOrigin) async throws -> WebhookEndpoint? {
        var details: [String: String] = [:]
        if let url = change.url { details.merge(WebhookAuditURL.details(url)) { kept, _ in kept } }
        if let description = change.description { details["description"] = description }
        let eventList = change.events.map { $0.map(\.rawValue).joined(separator: ",") }
        if let eventList { details["events"] = eventList }
        if let enabled = change.enabled { details["enabled"] = String(enabled) }
        let audited = details
        return try await database.withTransaction { session in
            let result = try await session.query("""
                UPDATE webhook_endpoints SET
                    url = coalesce(\(change.url)::text, url),
                    description = coalesce(\(change.description)::text, description),
                    events = coalesce(string_to_array(\(eventList)::text, ','), events),
                    enabled = coalesce(\(change.enabled)::boolean, enabled),
                    disabled_reason = CASE WHEN \(change.enabled)::boolean IS NULL THEN disabled_reason
                                           WHEN \(change.enabled)::boolean THEN NULL ELSE 'admin' END,
                    disabled_at = CASE WHEN \(change.enabled)::boolean IS NULL THEN disabled_at
                                       WHEN \(change.enabled)::boolean THEN NULL ELSE now() END,
                    failing_since = CASE WHEN \(change.enabled)::boolean THEN NULL ELSE failing_since END,
                    updated_at = now()
                WHERE id = \(id) AND deleted_at IS NULL
                RETURNING \(unescaped: Self.columns)
                """)
            guard let row = result.first else { return nil }
            try await AuditLog.append(.webhookUpdated, subject: Self.subject(id), details: audited, origin: origin, in: session)
            return try Self.endpoint(row)
        }
    }

    /// Deletes the endpoint (kept, marked deleted: its deliveries and attempts stay readable in the
    /// database and nothing more is queued or sent to it). False when there was none.
    public func delete(_ id: UUID, origin: AuditOrigin) async throws -> Bool {
        try await database.withTransaction { session in
            let result = try await session.query("""
                UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
                WHERE id = \(id) AND deleted_at IS NULL
                """)
            guard result.affectedRows == 1 else { return false }
            try await AuditLog.append(.webhookDeleted, subject: Self.subject(id), origin: origin, in: session)
            return true
        }
    }

    /// What a rotation came to.
    public enum Rotation: Sendable, Equatable {
        /// The new secret is stored; the one it replaced signs too until `previousSecretUntil`.
        case rotated(WebhookEndpoint)
        /// No such endpoint.
        case notFound
        /// An earlier rotation's previous secret still signs until `until`: rotating again would
        /// end it before the time that rotation announced, so it is refused unless forced.
        case inProgress(until: Date)
    }

    /// Replaces the secret with `newSealed`; the current one keeps signing until `previousValidUntil`.
    ///
    /// An endpoint signs with at most two secrets, its current one and the one before (Standard
    /// Webhooks' "current key and an old key, for a set period"). While the previous secret of an
    /// earlier rotation is still within the validity that rotation announced, a second rotation
    /// would drop it early, so it is refused (``Rotation/inProgress(until:)``) unless `force`:
    /// then that older secret stops signing now, and the audit event records `forced` and the
    /// validity cut short (`superseded_valid_until`). The endpoint row is locked first, so two
    /// rotations at once cannot both see no rotation in progress.
    public func rotateSecret(_ id: UUID, newSealed: [UInt8], previousValidUntil: Date, force: Bool = false,
                             origin: AuditOrigin) async throws -> Rotation {
        try await database.withTransaction { session in
            let current = try await session.query("""
                SELECT CASE WHEN previous_secret_until > now() THEN previous_secret_until END AS running_until
                FROM webhook_endpoints WHERE id = \(id) AND deleted_at IS NULL FOR UPDATE
                """)
            guard let row = current.first else { return .notFound }
            let runningUntil: Date? = try row.decode("running_until")
            if let runningUntil, !force { return .inProgress(until: runningUntil) }
            let result = try await session.query("""
                UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_until = \(previousValidUntil),
                    secret_sealed = \(newSealed), updated_at = now()
                WHERE id = \(id) AND deleted_at IS NULL
                RETURNING \(unescaped: Self.columns)
                """)
            guard let updated = result.first else { return .notFound }
            var details = ["previous_valid_until": WebhookTimestamp.format(previousValidUntil)]
            if let runningUntil {
                details["forced"] = "true"
                details["superseded_valid_until"] = WebhookTimestamp.format(runningUntil)
            }
            try await AuditLog.append(.webhookSecretRotated, subject: Self.subject(id), details: details, origin: origin, in: session)
            return .rotated(try Self.endpoint(updated))
        }
    }

    /// Queues a `webhook.test` event for the endpoint, audited; false when there is no such endpoint.
    public func sendTest(_ id: UUID, origin: AuditOrigin) async throws -> Bool {
        try await database.withTransaction { session in
            guard try await session.query("SELECT 1 FROM webhook_endpoints WHERE id = \(id) AND deleted_at IS NULL").rowCount == 1 else {
                return false
            }
            WebhookOutbox.enqueue(.test(endpointID: id, requestedBy: origin.actor?.name), in: session)
            try await AuditLog.append(.webhookTestSent, subject: Self.subject(id), origin: origin, in: session)
            return true
        }
    }

    /// Decodes the ``columns`` of `row`, by name.
    static func endpoint(_ row: PostgresRow) throws -> WebhookEndpoint {
        let events: String = try row.decode("events")
        return WebhookEndpoint(
            id: try row.decode("id"), url: try row.decode("url"), description: try row.decode("description"),
            events: events.split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) },
            secretSealed: try row.decode("secret_sealed"), previousSecretSealed: try row.decode("previous_secret_sealed"),
            previousSecretUntil: try row.decode("previous_secret_until"), enabled: try row.decode("enabled"),
            disabledReason: try row.decode("disabled_reason"), disabledAt: try row.decode("disabled_at"),
            failingSince: try row.decode("failing_since"), createdAt: try row.decode("created_at"),
            updatedAt: try row.decode("updated_at"))
    }
}
