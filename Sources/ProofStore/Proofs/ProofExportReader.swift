import Foundation
import Postgres

/// Reads the proofs received in a period, oldest first, from one consistent snapshot, in pages, so
/// an export of any length runs in constant memory and sees exactly the proofs its checkpoint
/// covers; with each proof its `proof_recorded` event, and after the last proof the audit chain
/// segments that link those events to the checkpoint's heads (``AuditSegment``).
public struct ProofExportReader: Sendable {
    let database: PostgresClient
    /// Proofs fetched per round trip (each carries its PNG and original body: keep it modest).
    public var pageSize: Int

    /// Creates a reader over `database`.
    public init(database: PostgresClient, pageSize: Int = 64) {
        self.database = database
        self.pageSize = pageSize
    }

    /// What an export sees before its first proof: the audit chains' heads in its snapshot and how
    /// many proofs it will read.
    public struct Snapshot: Sendable {
        /// Every audit chain's head as the snapshot sees it: exactly the events (every read proof's
        /// `proof_recorded` among them) that the export's checkpoint should cover.
        public var heads: [AuditChainHead]
        /// Proofs in the period.
        public var proofCount: Int
    }

    /// Opens a REPEATABLE READ, READ ONLY transaction, hands `start` the snapshot's heads and count,
    /// then `each` every proof with `since <= received_at < until`, by `(received_at, id)`, in
    /// pages; then, `withSegments`, `segment` every event of each chain from the oldest read proof's
    /// event up to the chain's head in the snapshot, by ascending `seq` (``AuditSegment``).
    ///
    /// With `storedCheckpointKey`, the segments end at the oldest stored checkpoint signed by that
    /// key whose heads cover every read proof's event, when there is one (returned): a scheduled
    /// checkpoint taken just after the period, so an old period's bundle does not carry every
    /// event recorded since (and its checkpoint is one the witnesses saw). Else they end at the
    /// snapshot's heads, and nil is returned.
    @discardableResult
    public func read(since: Date?, until: Date?, start: (Snapshot) async throws -> Void,
                     each: ([ExportedProof]) async throws -> Void, withSegments: Bool = false, storedCheckpointKey: [UInt8]? = nil,
                     segment: (AuditEvent) async throws -> Void = { _ in }) async throws -> AuditCheckpoint? {
        try await database.withTransaction(isolation: "REPEATABLE READ, READ ONLY") { session in
            let heads = try await AuditCheckpointStore.heads(in: session)
            let count = try await session.query("SELECT count(*) AS proofs FROM proofs p \(Self.period(since: since, until: until).whereClause)")
                .decode(Int.self, row: 0, column: "proofs")
            try await start(Snapshot(heads: heads, proofCount: count))
            var bounds = AuditSegment(heads: heads)
            let pageSize = self.pageSize
            // The next page is fetched while `each` handles this one (the session is idle then):
            // fetched only after `each` returned, the database's time and the exporter's packing
            // and writing added up.
            var page = try await Self.fetch(after: nil, since: since, until: until, pageSize: pageSize, in: session)
            while !page.proofs.isEmpty {
                let more = page.proofs.count == pageSize, cursor = page.last
                async let following: Page? = more ? Self.fetch(after: cursor, since: since, until: until, pageSize: pageSize, in: session) : nil
                for proof in page.proofs { if let event = proof.event { bounds.include(event) } }
                try await each(page.proofs)
                guard let next = try await following else { break }
                page = next
            }
            guard withSegments else { return nil }
            var ending: AuditCheckpoint?
            if let storedCheckpointKey, let (covering, shorter) = try await Self.covering(bounds, key: storedCheckpointKey, in: session) {
                bounds = shorter
                ending = covering
            }
            try await bounds.read(in: session, each: segment)
            return ending
        }
    }

    /// Stored checkpoints looked at for one that covers an export (the first few after its newest
    /// event: an event whose transaction committed late can leave the first one short of it).
    static let coveringCandidates = 16

    /// The oldest stored version 2 checkpoint signed by `key`, among the first
    /// ``coveringCandidates`` from the newest event of `bounds` on, whose heads cover `bounds`, with
    /// `bounds` ending at those heads.
    static func covering(_ bounds: AuditSegment, key: [UInt8], in session: PostgresSession) async throws -> (AuditCheckpoint, AuditSegment)? {
        guard let newest = bounds.lastSeq.values.max() else { return nil }
        let rows = try await session.query("""
            SELECT \(unescaped: AuditCheckpointStore.columns) FROM audit_checkpoints
            WHERE version = 2 AND seq >= \(newest) AND public_key = \(PostgresBytes(key))
            ORDER BY seq, id LIMIT \(coveringCandidates)
            """).rows
        for row in rows {
            let checkpoint = try AuditCheckpointStore.checkpoint(row)
            if checkpoint.hasValidSignature, let ending = bounds.ending(at: checkpoint.heads) { return (checkpoint, ending) }
        }
        return nil
    }

    /// `since <= received_at < until`, as a fresh filter to add to. Erased proofs (0026) are left
    /// out: nothing of them is left to export but their events, which the segments carry.
    static func period(since: Date?, until: Date?) -> SQLFilter {
        var filter = SQLFilter()
        filter.add("p.sealing <> \(ProofSealer.erased)")
        if let since { filter.add("p.received_at >= \(since)") }
        if let until { filter.add("p.received_at < \(until)") }
        return filter
    }

    /// A page of proofs and the cursor of its last one (exact microseconds: a Double round trip could skip a row).
    typealias Page = (proofs: [ExportedProof], last: (AuditTimestamp, UUID)?)

    /// One page of the period: the first `pageSize` proofs after `after` (by `(received_at, id)`),
    /// each with its `proof_recorded` event.
    static func fetch(after: (AuditTimestamp, UUID)?, since: Date?, until: Date?, pageSize: Int,
                      in session: PostgresSession) async throws -> Page {
        var page = period(since: since, until: until)
        if let after {
            // The plain `received_at >=` repeats what the row comparison implies, so that PostgreSQL
            // prunes the monthly partitions before the cursor (it cannot prune on a row comparison).
            page.add("p.received_at >= \(after.0) AND (p.received_at, p.id) > (\(after.0), \(after.1))")
        }
        let rows = try await session.query(Self.page(page, limit: pageSize)).rows
        var proofs: [ExportedProof] = []
        proofs.reserveCapacity(rows.count)
        var last: (AuditTimestamp, UUID)?
        for row in rows {
            let metadata = try ProofRepository.metadata(row)
            proofs.append(ExportedProof(metadata: metadata, recipientName: try row.decode("recipient_name"),
                                        address: try row.decode("address"),
                                        destination: GeoPoint.stored(lat: try row.decode("destination_lat"),
                                                                     lon: try row.decode("destination_lon")),
                                        body: try row.decode("body"), ink: try row.decode("ink"), png: try row.decode("png"),
                                        capturedAtMicros: try row.decode("captured_at_us"),
                                        receivedAtMicros: try row.decode("received_at_us"),
                                        deviceSignature: try Self.deviceSignature(row), devicePublicKey: try row.decode("device_public_key"),
                                        sealing: try row.decode("sealing"),
                                        dataKey: ProofRepository.key(try row.decode("kek_id"), try row.decode("wrapped_key"))))
            last = (try row.decode(AuditTimestamp.self, "received_at_exact"), metadata.id)
        }
        let events = try await Self.recordedEvents(for: proofs, in: session)
        for index in proofs.indices { proofs[index].event = events[proofs[index].metadata.id] }
        return (proofs, last)
    }

    /// The export's columns for the first `limit` proofs that `filter` keeps, by `(received_at, id)`.
    /// The page is chosen from `proofs` alone, then joined: joined in one query, the planner, told by
    /// statistics older than the newest rows that the period holds one row, joined and sorted every
    /// proof left in the period for each page of 32, so an export of fresh proofs grew with the
    /// square of its length. The joins are outer so that the page keeps every proof it chose: a
    /// proof whose delivery or key row is gone (only foreign keys switched off make one) fails the
    /// export when its columns are read, rather than shortening the page, which would end it early.
    static func page(_ filter: SQLFilter, limit: Int) -> PostgresQuery {
        """
        SELECT \(unescaped: ProofRepository.metadataColumns),
            (extract(epoch FROM p.captured_at) * 1000000)::int8 AS captured_at_us,
            (extract(epoch FROM p.received_at) * 1000000)::int8 AS received_at_us, p.received_at AS received_at_exact,
            coalesce(d.recipient_name, '') AS recipient_name, coalesce(d.address, '') AS address, d.destination_lat, d.destination_lon, p.body, p.ink, p.png,
            p.device_key_id, p.device_signature, dk.public_key AS device_public_key,
            p.sealing::int4 AS sealing, ddk.kek_id, ddk.wrapped_key
        FROM (SELECT * FROM proofs p \(filter.whereClause) ORDER BY p.received_at, p.id LIMIT \(limit)) p
            LEFT JOIN deliveries d ON d.id = p.delivery_id LEFT JOIN api_keys k ON k.id = p.uploaded_by
            LEFT JOIN device_keys dk ON dk.id = p.device_key_id LEFT JOIN delivery_data_keys ddk ON ddk.delivery_id = p.delivery_id
        ORDER BY p.received_at, p.id
        """
    }

    /// The `proof_recorded` events of `proofs`, by proof id: one query per page, by subject (indexed).
    static func recordedEvents(for proofs: [ExportedProof], in session: PostgresSession) async throws -> [UUID: AuditEvent] {
        guard !proofs.isEmpty else { return [:] }
        // References are `A-Z a-z 0-9 . _ : -` (migration 0011), so a comma separates them safely.
        let subjects = Set(proofs.map { "delivery:" + $0.metadata.deliveryReference }).sorted().joined(separator: ",")
        let wanted = Set(proofs.map(\.metadata.id))
        var events: [UUID: AuditEvent] = [:]
        let rows = try await session.query("""
            SELECT \(unescaped: AuditLog.columns) FROM audit_events
            WHERE action = 'proof_recorded' AND subject = ANY(string_to_array(\(subjects), ','))
            ORDER BY seq
            """).rows
        for row in rows {
            let event = try AuditLog.event(row)
            // The first event naming the proof: a second one is tampering, which `verify --database` reports.
            if let id = event.details["proof_id"].flatMap(UUID.init(text:)), wanted.contains(id), events[id] == nil {
                events[id] = event
            }
        }
        return events
    }

    /// The device key id and signature of a row read with the export's columns, when it has them.
    static func deviceSignature(_ row: PostgresRow) throws -> DeviceSignature? {
        guard let keyID: UUID = try row.decode("device_key_id"), let signature: [UInt8] = try row.decode("device_signature") else { return nil }
        return DeviceSignature(keyID: keyID, signature: signature)
    }
}
