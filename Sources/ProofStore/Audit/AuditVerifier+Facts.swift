import Cryptography
import Execution
import Foundation
import Postgres

/// What the walk checks beyond the chains' own hashes: that every proof and delivery still says
/// what its event bound (digests re-derived from the rows), and that every stored proof has
/// exactly one event.
extension AuditVerifier {
    /// Digests recomputed from a proof's stored bytes and columns, and those stored beside them.
    struct ProofDigests {
        var body: [UInt8]
        var png: [UInt8]
        var storedBody: [UInt8]
        var storedPNG: [UInt8]
        /// Of the canonical ink.
        var ink: [UInt8]
        /// ``ProofFacts/digest`` of the row as it is now, and its commitment under the salt of the
        /// data key of the event's delivery (nil: no key, or the proof is not sealed).
        var facts: BoundFacts
        /// The reference of the delivery the row points at.
        var reference: String
        /// The key that uploaded the proof.
        var uploadedBy: UUID
        /// The device key and signature stored with the proof (migration 0017), `nil` when unsigned.
        var deviceKeyID: UUID?
        var deviceSignature: [UInt8]?
    }

    /// The ink and facts checks of a `proof_recorded` event whose body and PNG hold. Events from
    /// before the facts were bound carry no `ink_sha256` and bind no metadata; for them the proof
    /// must still sit under the event's delivery.
    func checkFacts(_ event: AuditEvent, stored: ProofDigests, proofID: String) -> AuditBreak? {
        func failure(_ kind: AuditBreak.Kind, _ expected: String, _ found: String) -> AuditBreak {
            AuditBreak(seq: event.seq, kind: kind, expected: expected, found: found, subject: event.subject, proofID: proofID,
                       chain: event.chain)
        }
        let details = event.details
        if event.subject != "delivery:" + stored.reference {
            return failure(.proofDeliveryMismatch, event.subject, "delivery:" + stored.reference)
        }
        if let recorded = details["ink_sha256"], recorded != stored.ink.hexString {
            return failure(.proofInkMismatch, recorded, stored.ink.hexString)
        }
        if let (recorded, found) = stored.facts.compare(details, "metadata"), recorded != found {
            return failure(.proofMetadataMismatch, recorded, found ?? Self.noSalt)
        }
        return nil
    }

    /// What a break says was found when the event binds a commitment and the delivery has no data key.
    static let noSalt = "no data key to commit with"

    /// The `delivery_sha256` / `delivery_commitment` check of a `delivery_created` event (events
    /// from before the facts were bound have neither).
    func checkDelivery(_ event: AuditEvent, deliveries: [UUID: BoundFacts]) -> AuditBreak? {
        guard BoundFacts.binds(event.details, "delivery") else { return nil }
        let idText = event.details["delivery_id"] ?? ""
        let facts = UUID(uuidString: idText).flatMap { deliveries[$0] }
        let recorded = BoundFacts.recorded(event.details, "delivery")
        let found = facts?.compare(event.details, "delivery")?.found
        guard let found, found == recorded else {
            return AuditBreak(seq: event.seq, kind: .deliveryMismatch, expected: recorded,
                              found: found ?? (facts == nil ? "no delivery \(idText)" : Self.noSalt), subject: event.subject, chain: event.chain)
        }
        return nil
    }

    /// ``DeliveryFacts/digest`` of each delivery whose `delivery_created` event is in `events`, by
    /// id, with its commitment where the delivery has a data key.
    func deliveryDigests(for events: [AuditEvent], in session: PostgresSession) async throws -> [UUID: BoundFacts] {
        let ids = events.filter { $0.action == AuditAction.deliveryCreated.rawValue && BoundFacts.binds($0.details, "delivery") }
            .compactMap { $0.details["delivery_id"] }.filter { UUID(uuidString: $0) != nil }
        guard !ids.isEmpty else { return [:] }
        var digests: [UUID: BoundFacts] = [:]
        let rows = try await session.query("""
            SELECT d.id, d.reference::text AS reference, d.recipient_name::text AS recipient_name, d.address::text AS address,
                d.destination_lat::float8 AS destination_lat, d.destination_lon::float8 AS destination_lon, k.kek_id, k.wrapped_key
            FROM deliveries d LEFT JOIN delivery_data_keys k ON k.delivery_id = d.id
            WHERE d.id = ANY(string_to_array(\(ids.joined(separator: ",")), ',')::uuid[]) AND d.erased_at IS NULL
            """).rows
        for row in rows {
            let reference: String = try row.decode("reference")
            let destination = GeoPoint.stored(lat: try row.decode("destination_lat"), lon: try row.decode("destination_lon"))
            digests[try row.decode("id")] = try BoundFacts(
                digest: DeliveryFacts.digest(reference: reference, recipientName: try row.decode("recipient_name"),
                                             address: try row.decode("address"), destination: destination),
                salt: try salt(row, reference: reference))
        }
        return digests
    }

    /// The commitment salt of the data key in `row`'s `kek_id` and `wrapped_key` (of delivery
    /// `reference`), if it has one; a key that is there needs the data key file to open.
    func salt(_ row: PostgresRow, reference: String) throws -> CommitmentSalt? {
        guard ProofRepository.key(try row.decode("kek_id"), try row.decode("wrapped_key")) != nil else { return nil }
        guard let sealer else { throw SealingError.notConfigured }
        return try sealer.commitmentSalt(row, reference: reference)
    }

    /// Every stored proof has exactly one `proof_recorded` event: none without (`proof_without_event`:
    /// a row inserted behind the service's back), none with two (`proof_event_duplicate`).
    /// An incremental run passes `since`: only proofs received from `micros` on, against events
    /// after `seq` (a proof received after a checkpoint was signed has its event after it).
    func checkEveryProofHasOneEvent(in session: PostgresSession, since: (micros: Int64, seq: Int64) = (0, 0)) async throws -> AuditBreak? {
        let receivedFrom = AuditTimestamp(micros: since.micros)
        if let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query(Self.proofWithoutEvent(receivedFrom: receivedFrom, afterSeq: since.seq)).first
        }) {
            let id: String = try row.decode("id")
            return AuditBreak(seq: 0, kind: .proofWithoutEvent, expected: "a proof_recorded event", found: "none",
                              subject: "delivery:" + (try await Self.reference(of: try row.decode("delivery_id"), in: session)), proofID: id)
        }
        if let row = try await session.query("""
            SELECT details ->> 'proof_id' AS id, max(seq)::int8 AS seq, min(subject)::text AS subject FROM audit_events
            WHERE seq > \(since.seq) AND action = 'proof_recorded' GROUP BY details ->> 'proof_id' HAVING count(*) > 1 LIMIT 1
            """).first {
            return AuditBreak(seq: try row.decode("seq"), kind: .proofEventDuplicate, expected: "one proof_recorded event",
                              found: "two or more", subject: try row.decode("subject"), proofID: try row.decode("id"))
        }
        return nil
    }

    /// A proof received from `receivedFrom` on without a `proof_recorded` event after `afterSeq`, if any.
    /// Its delivery's reference is read only when one is found: joined here, with nested loops off,
    /// the join read every delivery (a merge or hash join), which an incremental run must not.
    static func proofWithoutEvent(receivedFrom: AuditTimestamp, afterSeq: Int64) -> PostgresQuery {
        """
        SELECT p.id::text AS id, p.delivery_id FROM proofs p
        WHERE p.received_at >= \(receivedFrom) AND NOT EXISTS (SELECT 1 FROM audit_events e
            WHERE e.seq > \(afterSeq) AND e.action = 'proof_recorded' AND e.details ->> 'proof_id' = p.id::text)
        LIMIT 1
        """
    }

    /// The reference of the delivery `id`, or a placeholder naming the id if it has none.
    static func reference(of id: UUID, in session: PostgresSession) async throws -> String {
        try await session.query("SELECT reference::text AS reference FROM deliveries WHERE id = \(id)").first?
            .decode(String.self, "reference") ?? "(no delivery \(id.uuidString.lowercased()))"
    }

    /// Runs `body`, an anti-join of every row against every event, planned for it: nested loops
    /// off, and a custom plan for its bounds, for the transaction. Under `LIMIT 1` the planner expects an early match and picks a nested loop that
    /// compares each row with each event, but a sound database has no match to find: 36,906 proofs
    /// took 204 s (0.18 s as a hash anti-join), and stale statistics after a busy day make the
    /// same choice. Plans are made for the values at hand: a generic plan cannot tell an
    /// incremental run's last hour from the whole history, and scans every row for both.
    /// `SET LOCAL` ends with the transaction; both are switched back as soon as `body` ends.
    static func withAntiJoinPlans<T: Sendable>(in session: PostgresSession, _ body: () async throws -> T) async throws -> T {
        try await session.query("SET LOCAL enable_nestloop = off")
        try await session.query("SET LOCAL plan_cache_mode = force_custom_plan")
        let value = try await body()
        try await session.query("SET LOCAL plan_cache_mode = auto")
        try await session.query("SET LOCAL enable_nestloop = on")
        return value
    }

    /// What `countersign export --archive` writes as `since`/`until` (RFC 3339, UTC); anything else
    /// (only tampering makes it) is ignored rather than failing the cast, and the walk reports the event.
    static let timestampPattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$"#

    /// The digests of the proofs `events` record, and which of the missing ones were archived.
    /// The proofs are read in batches of ``proofBatchSize``, spread over `readers` (the walk's
    /// session first, then sessions sharing its snapshot): each reads its batches one after the
    /// other while the others read theirs, so the server detoasts, and this process hashes, on
    /// several cores at once.
    func proofDigests(for events: [AuditEvent], in session: PostgresSession, readers: [PostgresSession] = [])
        async throws -> (digests: [UUID: ProofDigests], archived: Set<UUID>) {
        var subjects: [UUID: String] = [:]
        var ids: [UUID] = []
        for event in events where event.action == AuditAction.proofRecorded.rawValue {
            guard let id = event.details["proof_id"].flatMap(UUID.init(uuidString:)) else { continue }
            subjects[id] = event.subject
            ids.append(id)
        }
        let sessions = [session] + readers
        let batches = stride(from: 0, to: ids.count, by: proofBatchSize).map { start in
            ids[start..<min(start + proofBatchSize, ids.count)].map { (id: $0, subject: subjects[$0] ?? "") }
        }
        var digests: [UUID: ProofDigests] = [:]
        try await withThrowingTaskGroup(of: [UUID: ProofDigests].self) { group in
            for (index, reader) in sessions.enumerated() {
                let mine = stride(from: index, to: batches.count, by: sessions.count).map { batches[$0] }
                guard !mine.isEmpty else { continue }
                group.addTask {
                    var found: [UUID: ProofDigests] = [:]
                    for batch in mine { try await Self.readProofs(batch, in: reader, sealer: sealer, offload: offload, into: &found) }
                    return found
                }
            }
            for try await found in group { digests.merge(found) { first, _ in first } }
        }
        let missing = ids.filter { digests[$0] == nil }
        guard !missing.isEmpty else { return (digests, []) }
        // A delivery keeps `delivered_at` = its proof's `received_at` when the proof's month is
        // dropped; the archive events are read in the same snapshot (and verified by the walk).
        let references = Set(missing.compactMap { subjects[$0] }.filter { $0.hasPrefix("delivery:") }.map { String($0.dropFirst(9)) })
        let referenceList = references.sorted().joined(separator: ",")
        let archivedReferences = try await Set(session.query("""
            SELECT d.reference FROM deliveries d
            WHERE d.reference = ANY(string_to_array(\(referenceList), ',')) AND d.status = 'delivered'
              AND EXISTS (SELECT 1 FROM audit_events a
                          WHERE a.action = 'proofs_archived'
                            AND a.details ->> 'since' ~ \(Self.timestampPattern) AND a.details ->> 'until' ~ \(Self.timestampPattern)
                            AND d.delivered_at >= (a.details ->> 'since')::timestamptz AND d.delivered_at < (a.details ->> 'until')::timestamptz)
            """).rows.map { try $0.decode(String.self, "reference") })
        let archived = Set(missing.filter { id in subjects[id].map { archivedReferences.contains(String($0.dropFirst(9))) } ?? false })
        return (digests, archived)
    }

    /// Reads the proofs `ids` in one round trip and adds their digests to `digests`. The database
    /// hashes a clear proof's columns; a sealed proof's are fetched, opened with `sealer` and
    /// hashed on `offload`, where the facts of every proof whose delivery has a data key are also
    /// committed under its salt. A box that does not open (altered, or moved to another row) gets an
    /// empty digest, so the proof is reported as not matching its event; a missing key file or a
    /// key id it lacks stops the verification with that error instead (nothing was checked).
    ///
    /// The data key is the one of the delivery the proof's *event* names (`subject`), not of the
    /// delivery the row points at now: a proof moved to another delivery still opens, and is then
    /// reported for what it is, a proof under the wrong delivery.
    static func readProofs(_ proofs: [(id: UUID, subject: String)], in session: PostgresSession, sealer: ProofSealer?, offload: any CPUOffload,
                           into digests: inout [UUID: ProofDigests]) async throws {
        let idList = proofs.map { $0.id.uuidString.lowercased() }.joined(separator: ",")
        // References are `A-Z a-z 0-9 . _ : -` (migration 0011): a comma separates them safely.
        let referenceList = proofs.map { $0.subject.hasPrefix("delivery:") ? String($0.subject.dropFirst(9)) : "" }.joined(separator: ",")
        let clear = ProofSealer.clear
        let result = try await session.query("""
            WITH recorded AS (
                SELECT * FROM unnest(string_to_array(\(idList), ',')::uuid[], string_to_array(\(referenceList), ',')) AS r(id, reference)
            )
            SELECT \(unescaped: ProofFacts.columns), p.sealing::int4 AS sealing, r.reference AS key_reference, k.kek_id, k.wrapped_key,
                CASE WHEN p.sealing = \(clear) THEN pg_catalog.sha256(p.body) ELSE p.body END AS body_digest,
                CASE WHEN p.sealing = \(clear) THEN pg_catalog.sha256(p.png) ELSE p.png END AS png_digest,
                CASE WHEN p.sealing = \(clear) THEN pg_catalog.sha256(p.ink) ELSE p.ink END AS ink_digest,
                p.body_sha256::bytea AS body_sha256, p.png_sha256::bytea AS png_sha256, p.device_key_id, p.device_signature
            FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN recorded r ON r.id = p.id
                LEFT JOIN deliveries kd ON kd.reference = r.reference LEFT JOIN delivery_data_keys k ON k.delivery_id = kd.id
            WHERE p.id = ANY(string_to_array(\(idList), ',')::uuid[])
            """)
        var sealed: [(id: UUID, reference: String, sealing: Int, key: ProofSealer.WrappedKey?, body: [UInt8], png: [UInt8], ink: [UInt8],
                      facts: [UInt8])] = []
        for row in result.rows {
            let facts = try ProofFacts(row: row)
            let (body, png, ink): ([UInt8], [UInt8], [UInt8]) = (try row.decode("body_digest"), try row.decode("png_digest"), try row.decode("ink_digest"))
            let sealing: Int = try row.decode("sealing")
            let key = ProofRepository.key(try row.decode("kek_id"), try row.decode("wrapped_key"))
            // Sealed, or committed under its delivery's key: opened, or only salted, on `offload`.
            if sealing != ProofSealer.erased && (sealing != clear || key != nil) {
                sealed.append((facts.proofID, try row.decode("key_reference"), sealing, key, body, png, ink, facts.digest))
            }
            digests[facts.proofID] = ProofDigests(
                body: body, png: png, storedBody: try row.decode("body_sha256"), storedPNG: try row.decode("png_sha256"),
                ink: ink, facts: try BoundFacts(digest: facts.digest, salt: nil), reference: facts.reference,
                uploadedBy: facts.uploadedBy, deviceKeyID: try row.decode("device_key_id"),
                deviceSignature: try row.decode("device_signature"))
        }
        guard !sealed.isEmpty else { return }
        guard let sealer else { throw SealingError.notConfigured }
        let toOpen = sealed
        // The commitment to the facts is made with the salt of the same key that opens the proof.
        let opened = try await offload.run { () throws(SealingError) -> [(UUID, [UInt8], [UInt8], [UInt8], BoundFacts)] in
            try toOpen.map { proof throws(SealingError) in
                func digest(_ box: [UInt8], _ field: SealedField) throws(SealingError) -> [UInt8] {
                    do {
                        return SHA256.hash(try sealer.open(box, field, sealing: proof.sealing, proof: proof.id, reference: proof.reference,
                                                           key: proof.key))
                    } catch .unreadable {
                        return []  // not what was recorded: reported against the event
                    }
                }
                let salt = try proof.key.map { key throws(SealingError) in try sealer.commitmentSalt(key, reference: proof.reference) }
                let facts = try BoundFacts(digest: proof.facts, salt: salt)
                // A clear proof's columns came hashed by the database.
                if proof.sealing == ProofSealer.clear { return (proof.id, proof.body, proof.png, proof.ink, facts) }
                return (proof.id, try digest(proof.body, .body), try digest(proof.png, .png), try digest(proof.ink, .ink), facts)
            }
        }
        for (id, body, png, ink, facts) in opened {
            digests[id]?.body = body
            digests[id]?.png = png
            digests[id]?.ink = ink
            digests[id]?.facts = facts
        }
    }
}
