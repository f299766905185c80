import Cryptography
import Foundation
import Postgres

/// The append-only, hash-chained audit log (`audit_events`, see `docs/audit.md`).
///
/// Events form ``chainCount`` independent chains; an event's chain is derived from its subject
/// (``chain(for:)``), so every event of one delivery or key is on one chain. Appends run inside the
/// caller's transaction so an event commits or rolls back with the change it records. An append
/// locks its chain's row in `audit_chains` (`FOR UPDATE`; several chains in ascending order, so
/// appends never deadlock), draws its global `seq` from `audit_events_seq` under that lock, links
/// `prev_hash` to the chain's head, inserts the event and moves the head. The lock is held until commit, so
/// appends to one chain are serialised and never fork it, while appends to different chains
/// commit concurrently. Appending requires READ COMMITTED (the default) so the locked head row is
/// the newest committed one.
public struct AuditLog: Sendable {
    let database: PostgresClient
    let batcher: AuditBatcher

    /// The number of chains (`audit_chains` rows made by migration 0009).
    public static let chainCount: Int16 = 16

    /// Creates the log over `database`.
    public init(database: PostgresClient) {
        self.database = database
        self.batcher = AuditBatcher(database: database)
    }

    /// The columns ``event(_:)`` decodes into a tuple, in this order.
    static let columns = """
        seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent,
        details_text, prev_hash, hash, chain, encoding
        """

    /// The chain of events about `subject`: the first two bytes of SHA-256(subject), big-endian,
    /// modulo ``chainCount``.
    public static func chain(for subject: String) -> Int16 {
        let digest = SHA256.hash(Array(subject.utf8))
        return Int16((Int(digest[0]) << 8 | Int(digest[1])) % Int(chainCount))
    }

    /// Appends an event in the transaction `session` is in; hold the transaction open only briefly
    /// afterwards, since other appends to the same chain wait for its commit.
    @discardableResult
    public static func append(_ action: AuditAction, subject: String, details: [String: String] = [:], origin: AuditOrigin,
                              in session: PostgresSession) async throws -> AuditEvent {
        try await append([AuditEntry(action: action, subject: subject, details: details, origin: origin)], in: session)[0]
    }

    /// Appends `entries`, each on its subject's chain and chained in order within it, in the
    /// transaction `session` is in: one statement locks every chain concerned (ascending) and draws
    /// the numbers, a second inserts the events and moves the heads. The first goes to the server
    /// with whatever the transaction queued before it; the second is queued, so it goes with the
    /// next statement or the commit, which is also where its error would be thrown.
    static func append(_ entries: [AuditEntry], in session: PostgresSession) async throws -> [AuditEvent] {
        let chains = entries.map { chain(for: $0.subject) }
        var counts: [Int16: Int] = [:]
        for chain in chains { counts[chain, default: 0] += 1 }
        let wanted = counts.keys.sorted()
        // Each chain's numbers are drawn only once its row is locked (the CTE yields a row after
        // locking it), so within a chain numbers rise in commit order; rows lock in ascending order.
        let locked: PostgresResult
        if entries.count == 1 {
            // The common case (every upload): one chain, one number. A statement of its own, because
            // the general one's estimates depend on its arrays, so PostgreSQL would plan it anew on
            // every execution; this one keeps its generic plan.
            locked = try await session.query("""
                WITH locked AS (SELECT chain, head_seq, head_hash FROM audit_chains WHERE chain = \(wanted[0])::smallint FOR UPDATE)
                SELECT chain, head_seq, head_hash, nextval('audit_events_seq')::text FROM locked
                """)
        } else {
            let chainList = "{" + wanted.map(String.init).joined(separator: ",") + "}"
            let countList = "{" + wanted.map { String(counts[$0]!) }.joined(separator: ",") + "}"
            locked = try await session.query("""
                WITH locked AS (
                    SELECT a.chain, a.head_seq, a.head_hash FROM audit_chains a
                    WHERE a.chain = ANY(\(chainList)::smallint[]) ORDER BY a.chain FOR UPDATE
                )
                SELECT l.chain, l.head_seq, l.head_hash,
                    array_to_string(ARRAY(SELECT nextval('audit_events_seq') FROM generate_series(1, u.n)), ',')
                FROM locked l JOIN unnest(\(chainList)::smallint[], \(countList)::int[]) AS u(c, n) ON u.c = l.chain
                """)
        }
        var heads: [Int16: AuditChainHead] = [:]
        var numbers: [Int16: ArraySlice<Int64>] = [:]
        for row in locked.rows {
            let (chainNumber, seq, hash, drawn) = try row.decode((Int64, Int64, [UInt8], String).self)
            let chain = Int16(chainNumber)
            heads[chain] = AuditChainHead(chain: chain, seq: seq, hash: hash)
            numbers[chain] = ArraySlice(drawn.split(separator: ",").compactMap { Int64($0) }.sorted())
        }
        var events: [AuditEvent] = []
        var rows: [PostgresQuery] = []
        for (entry, chain) in zip(entries, chains) {
            guard let head = heads[chain], let seq = numbers[chain]?.popFirst() else {
                throw PostgresError(.decodingFailed, message: "audit chain \(chain) was not locked")
            }
            let detailsJSON = AuditDetailsJSON.encode(entry.details)
            let micros = Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
            let origin = entry.origin
            var event = AuditEvent(seq: seq, occurredAtMicros: micros, actorKeyID: origin.actor?.keyID, actorRole: origin.role,
                                   action: entry.action.rawValue, subject: entry.subject, requestID: origin.requestID,
                                   clientAddress: origin.clientAddress, userAgent: origin.userAgent.map { String($0.prefix(512)) },
                                   detailsJSON: detailsJSON, prevHash: head.hash, hash: [], chain: chain, encoding: .v2)
            event.hash = event.recomputedHash
            heads[chain] = AuditChainHead(chain: chain, seq: seq, hash: event.hash)
            // Text is bound as `::text`: a parameter left to take the column's domain type (0011)
            // would go through domain_in, which sets the domain up again at every bind.
            rows.append("""
                (\(event.seq), \(event.chain)::smallint, 2, \(AuditTimestamp(micros: event.occurredAtMicros)), \(event.actorKeyID), \
                \(event.actorRole)::text, \(event.action)::text, \(event.subject), \(event.requestID)::text, \
                \(event.clientAddress)::text, \(event.userAgent)::text, \(event.detailsJSON), \(PostgresBytes(event.prevHash)), \
                \(PostgresBytes(event.hash)))
                """)
            events.append(event)
        }
        let moved: [PostgresQuery] = wanted.map { chain in
            let head = heads[chain]!
            return "(\(head.chain)::smallint, \(head.seq)::bigint, \(PostgresBytes(head.hash))::bytea)"
        }
        session.enqueue("""
            WITH moved AS (
                UPDATE audit_chains c SET head_seq = v.seq, head_hash = v.hash
                FROM (VALUES \(moved.joined(separator: ", "))) AS v(chain, seq, hash) WHERE c.chain = v.chain
            )
            INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_key_id, actor_role, action, subject, request_id,
                client_address, user_agent, details_text, prev_hash, hash)
            VALUES \(rows.joined(separator: ", "))
            """)
        return events
    }

    /// Appends an event in a transaction of its own (reads of proof content, exports) and returns
    /// once it is committed. Concurrent calls are group-committed: while one batch commits, the
    /// next ones queue and then go in together, one commit for many events (each chain locked once).
    @discardableResult
    public func append(_ action: AuditAction, subject: String, details: [String: String] = [:],
                       origin: AuditOrigin) async throws -> AuditEvent {
        try await batcher.append(AuditEntry(action: action, subject: subject, details: details, origin: origin))
    }

    /// One page of events matching `query`, by ascending seq. `seq` is drawn when an append locks
    /// its chain, not when it commits, so an event can become visible after one with a higher seq:
    /// a reader paging the newest events can miss one that commits late (`docs/audit.md`, "Listing events").
    public func events(_ query: AuditQuery) async throws -> AuditPage {
        var filter = SQLFilter()
        if let since = query.since { filter.add("occurred_at >= \(since)") }
        if let until = query.until { filter.add("occurred_at < \(until)") }
        if let actor = query.actorKeyID { filter.add("actor_key_id = \(actor)") }
        if let action = query.action { filter.add("action = \(action)") }
        if let subject = query.subject { filter.add("subject = \(subject)") }
        if let after = query.afterSeq { filter.add("seq > \(after)") }
        let result = try await database.query(
            "SELECT \(unescaped: Self.columns) FROM audit_events \(filter.whereClause) ORDER BY seq LIMIT \(query.limit + 1)")
        let page = keysetPage(try result.rows.map(Self.event), limit: query.limit, seq: \.seq)
        return AuditPage(events: page.rows, nextSeq: page.nextSeq)
    }

    /// Up to `limit` events after `(seq, occurred_at)`, by ascending primary key, read in `session`
    /// (a duplicated seq, which only tampering can make, is read twice, not skipped).
    static func page(after key: (Int64, AuditTimestamp), limit: Int, in session: PostgresSession) async throws -> [AuditEvent] {
        try await session.query("""
            SELECT \(unescaped: columns) FROM audit_events WHERE (seq, occurred_at) > (\(key.0), \(key.1))
            ORDER BY seq, occurred_at LIMIT \(limit)
            """).rows.map(event)
    }

    /// Decodes the ``columns`` of `row`.
    static func event(_ row: PostgresRow) throws -> AuditEvent {
        let (seq, occurredAt, actorKeyID, actorRole, action, subject, requestID, clientAddress, userAgent, detailsJSON,
             prevHash, hash, chain, encoding) = try row.decode(
            (Int64, AuditTimestamp, UUID?, String?, String, String, String?, String?, String?, String, [UInt8], [UInt8], Int64, Int64).self)
        return AuditEvent(seq: seq, occurredAtMicros: occurredAt.micros, actorKeyID: actorKeyID, actorRole: actorRole, action: action,
                          subject: subject, requestID: requestID, clientAddress: clientAddress, userAgent: userAgent,
                          detailsJSON: detailsJSON, prevHash: prevHash, hash: hash, chain: Int16(chain),
                          encoding: AuditEvent.Encoding(rawValue: Int16(encoding)) ?? .v2)
    }
}
