import Foundation
import Postgres

/// Filters and a page position for reading the audit log (oldest first).
public struct AuditQuery: Sendable, Equatable {
    /// Events at or after this time.
    public var since: Date?
    /// Events before this time.
    public var until: Date?
    /// Events by this API key.
    public var actorKeyID: UUID?
    /// Events with this action.
    public var action: String?
    /// Events about this subject.
    public var subject: String?
    /// Page size.
    public var limit: Int
    /// Events after this sequence number (keyset paging).
    public var afterSeq: Int64?

    /// Creates a query.
    public init(since: Date? = nil, until: Date? = nil, actorKeyID: UUID? = nil, action: String? = nil, subject: String? = nil,
                limit: Int = 100, afterSeq: Int64? = nil) {
        self.since = since
        self.until = until
        self.actorKeyID = actorKeyID
        self.action = action
        self.subject = subject
        self.limit = limit
        self.afterSeq = afterSeq
    }
}

/// One page of audit events and where the next one starts.
public struct AuditPage: Sendable, Equatable {
    /// The events, by ascending seq.
    public var events: [AuditEvent]
    /// The seq to pass as ``AuditQuery/afterSeq`` for the next page; `nil` on the last page.
    public var nextSeq: Int64?
}

/// The append-only, hash-chained audit log (`audit_events`, see `docs/audit.md`).
///
/// Appends run inside the caller's transaction so an event commits or rolls back with the change
/// it records. Each append first calls `countersign_audit_head()`, which takes a transaction-scoped
/// advisory lock: appends are serialised until commit, so concurrent writers never fork the
/// chain, and `seq` has no gaps. Appending requires READ COMMITTED (the default) so the head read
/// after the lock sees the last committed event; the primary key on `seq` rejects any fork anyway.
public struct AuditLog: Sendable {
    let database: PostgresClient
    let batcher: AuditBatcher

    /// Creates the log over `database`.
    public init(database: PostgresClient) {
        self.database = database
        self.batcher = AuditBatcher(database: database)
    }

    static let columns = """
        seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent,
        details_text, prev_hash, hash
        """

    /// Appends an event in the transaction `session` is in; hold the transaction open only briefly
    /// afterwards, since other appends wait for its commit.
    @discardableResult
    public static func append(_ action: AuditAction, subject: String, details: [String: String] = [:], origin: AuditOrigin,
                              in session: PostgresSession) async throws -> AuditEvent {
        try await append([AuditEntry(action: action, subject: subject, details: details, origin: origin)], in: session)[0]
    }

    /// Appends `entries`, chained in order, in the transaction `session` is in: one audit lock and
    /// one multi-row INSERT for all of them.
    static func append(_ entries: [AuditEntry], in session: PostgresSession) async throws -> [AuditEvent] {
        let head = try await session.query("SELECT head_seq, head_hash FROM countersign_audit_head()")
        var seq: Int64 = 1
        var prevHash = AuditEvent.genesisHash
        if let row = head.first {
            seq = try row.decode(Int64.self, 0) + 1
            prevHash = try row.decode([UInt8].self, 1)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var events: [AuditEvent] = []
        var rows: [String] = []
        var parameters: [any PostgresBindable] = []
        for entry in entries {
            let detailsJSON = String(decoding: try encoder.encode(entry.details), as: UTF8.self)
            let micros = Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
            let origin = entry.origin
            var event = AuditEvent(seq: seq, occurredAtMicros: micros, actorKeyID: origin.actor?.keyID, actorRole: origin.role,
                                   action: entry.action.rawValue, subject: entry.subject, requestID: origin.requestID,
                                   clientAddress: origin.clientAddress, userAgent: origin.userAgent.map { String($0.prefix(512)) },
                                   detailsJSON: detailsJSON, prevHash: prevHash, hash: [])
            event.hash = event.recomputedHash
            let base = parameters.count
            rows.append("($\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4)::text, $\(base + 5), $\(base + 6), $\(base + 7)::text, "
                        + "$\(base + 8)::text, $\(base + 9)::text, $\(base + 10), $\(base + 11), $\(base + 12))")
            parameters += [event.seq, AuditTimestamp(micros: event.occurredAtMicros), event.actorKeyID, event.actorRole, event.action,
                           event.subject, event.requestID, event.clientAddress, event.userAgent, event.detailsJSON,
                           PostgresBytes(event.prevHash), PostgresBytes(event.hash)]
            events.append(event)
            seq += 1
            prevHash = event.hash
        }
        try await session.execute("""
            INSERT INTO audit_events (seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address,
                user_agent, details_text, prev_hash, hash)
            VALUES \(rows.joined(separator: ", "))
            """, parameters)
        return events
    }

    /// Appends an event in a transaction of its own (reads of proof content, exports) and returns
    /// once it is committed. Concurrent calls are group-committed: while one batch commits, the
    /// next ones queue and then go in together, one lock and one commit for many events.
    @discardableResult
    public func append(_ action: AuditAction, subject: String, details: [String: String] = [:],
                       origin: AuditOrigin) async throws -> AuditEvent {
        try await batcher.append(AuditEntry(action: action, subject: subject, details: details, origin: origin))
    }

    /// One page of events matching `query`, oldest first.
    public func events(_ query: AuditQuery) async throws -> AuditPage {
        let filter = SQLFilter()
        if let since = query.since { filter.add("occurred_at >= \(filter.bind(since))") }
        if let until = query.until { filter.add("occurred_at < \(filter.bind(until))") }
        if let actor = query.actorKeyID { filter.add("actor_key_id = \(filter.bind(actor))") }
        if let action = query.action { filter.add("action = \(filter.bind(action))") }
        if let subject = query.subject { filter.add("subject = \(filter.bind(subject))") }
        if let after = query.afterSeq { filter.add("seq > \(filter.bind(after))") }
        let limit = filter.bind(query.limit + 1)
        let whereClause = filter.whereClause
        let result = try await database.query(
            "SELECT \(Self.columns) FROM audit_events \(whereClause) ORDER BY seq LIMIT \(limit)", filter.parameters)
        let page = keysetPage(try result.rows.map(Self.event), limit: query.limit, seq: \.seq)
        return AuditPage(events: page.rows, nextSeq: page.nextSeq)
    }

    /// Up to `limit` events after `seq`, by ascending seq, read in `session`.
    static func page(after seq: Int64, limit: Int, in session: PostgresSession) async throws -> [AuditEvent] {
        try await session.query("SELECT \(columns) FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT $2", [seq, limit])
            .rows.map(event)
    }

    static func event(_ row: PostgresRow) throws -> AuditEvent {
        AuditEvent(seq: try row.decode(Int64.self, 0), occurredAtMicros: try row.decode(AuditTimestamp.self, 1).micros,
                   actorKeyID: try row.decode(UUID?.self, 2), actorRole: try row.decode(String?.self, 3),
                   action: try row.decode(String.self, 4), subject: try row.decode(String.self, 5),
                   requestID: try row.decode(String?.self, 6), clientAddress: try row.decode(String?.self, 7),
                   userAgent: try row.decode(String?.self, 8), detailsJSON: try row.decode(String.self, 9),
                   prevHash: try row.decode([UInt8].self, 10), hash: try row.decode([UInt8].self, 11))
    }
}
