import Cryptography
import Foundation
import Postgres

/// Stores proofs (immutable once stored) and reads them back. A proof's body, ink and PNG are
/// stored sealed under its delivery's data key (``ProofSealer``) and opened as they are read.
public struct ProofRepository: Sendable {
    let database: PostgresClient
    let batcher: ProofBatcher
    let sealer: ProofSealer

    /// Creates the repository over `database`, sealing with the keys of `dataKeys`. Proofs recorded
    /// through one repository (and its copies) are group-committed together (``ProofBatcher``):
    /// make one per service.
    public init(database: PostgresClient, dataKeys: DataKeyProvider) {
        self.init(database: database, dataKeys: dataKeys, maxBatch: 32, maxInFlight: 1, lockWait: .seconds(1))
    }

    /// A repository whose batcher stores at most `maxBatch` proofs per transaction, runs at most
    /// `maxInFlight` transactions at once, and lets them wait at most `lockWait` for a lock (tests
    /// pin these to make batches predictable).
    init(database: PostgresClient, dataKeys: DataKeyProvider, maxBatch: Int, maxInFlight: Int, lockWait: Duration) {
        self.database = database
        self.sealer = ProofSealer(keys: dataKeys)
        self.batcher = ProofBatcher(maxBatch: maxBatch, maxInFlight: maxInFlight, lockWait: lockWait) { batch, milliseconds in
            try await Self.recordTogether(batch, lockWaitMilliseconds: milliseconds, in: database)
        }
    }

    /// What this repository's group commit has done so far.
    public var batchStatistics: ProofBatchCounts {
        batcher.statistics
    }

    /// The delivery's id, destination and status (for early 404/409 before any CPU work). Only a
    /// pending delivery takes a proof, and a delivered one has (or, once its month is archived,
    /// had) one: the status says all the intake needs, so the look-up reads no proof partition
    /// (joining `proofs` cost every upload a lock and a scan node per monthly partition).
    /// The delivery's wrapped data key comes with it (nil for a delivery stored before keys were
    /// made with the delivery): the proof is sealed under it and its event committed with its salt.
    public func deliveryState(reference: String)
        async throws -> (deliveryID: UUID, destination: GeoPoint?, status: DeliveryStatus, dataKey: ProofSealer.WrappedKey?)? {
        let result = try await database.query("""
            SELECT d.id, d.destination_lat, d.destination_lon, d.status::text, k.kek_id, k.wrapped_key
            FROM deliveries d \(unescaped: Self.dataKeyJoin) WHERE d.reference = \(reference)::text
            """)
        guard let row = result.first else { return nil }
        let (deliveryID, lat, lon, status, keyID, wrapped) = try row.decode((UUID, Double?, Double?, String, String?, [UInt8]?).self)
        return (deliveryID, GeoPoint.stored(lat: lat, lon: lon), DeliveryStatus(rawValue: status) ?? .pending, Self.key(keyID, wrapped))
    }

    /// Stores `proof` for the delivery `reference`, marks the delivery delivered and, when given,
    /// completes the idempotency record with its response — one statement. The delivery row is the
    /// arbiter (`proofs` is partitioned by month, so no unique index can span it): the statement
    /// marks the delivery delivered only while it is `pending`, concurrent uploads for one delivery
    /// queue on that row lock, exactly one updates it, and the others update nothing and get
    /// ``ProofStoreError/proofAlreadyRecorded(_:)`` — their transaction rolls back, taking their
    /// inserted proof row with it.
    ///
    /// `deliveries.delivered_at` is set to the proof's `received_at`, which is how every look-up by
    /// reference finds the one partition holding the proof.
    ///
    /// The same transaction appends a `proof_recorded` audit event (subject `delivery:<reference>`,
    /// details ``recordedDetails(_:reference:)``) on behalf of `origin`, and queues the
    /// `delivery.delivered` webhook event in the outbox (``WebhookOutbox``). Returns once committed.
    /// Proofs recorded at the same time may share the transaction (``ProofBatcher``); each still
    /// gets its own event and its own answer.
    public func record(_ proof: NewProof, reference: String, dataKey: ProofSealer.WrappedKey?,
                       idempotency: (apiKeyID: UUID, key: String, response: IdempotentResponse)? = nil,
                       origin: AuditOrigin = .system) async throws {
        // Sealed here, before the batch: a few AES-GCM passes over tens of kilobytes, like the digests.
        let sealed = try sealer.seal(proof, reference: reference, existing: dataKey)
        try await batcher.record(PendingProof(proof: proof, reference: reference, sealed: sealed, idempotency: idempotency, origin: origin))
    }

    /// ``record(_:reference:dataKey:idempotency:origin:)`` for a caller that has not read the
    /// delivery: its data key is read first (one more round trip; a delivery not found is left to
    /// the statement to report, as for any upload).
    public func record(_ proof: NewProof, reference: String, origin: AuditOrigin = .system) async throws {
        try await record(proof, reference: reference, dataKey: try await deliveryState(reference: reference)?.dataKey, origin: origin)
    }

    /// Proofs in one transaction, all or none: each one's statement, one audit append for all of
    /// them, each one's outbox statement, one commit; for one proof that is `BEGIN`, its statement
    /// and the chain's lock in one round trip, the audit insert, the outbox statement and `COMMIT`
    /// in the other. With `lockWaitMilliseconds`, the transaction waits at most that long for any
    /// lock (`lock_timeout`, SQLSTATE 55P03 past it). Throws the first failure; nothing is stored then.
    /// The database's refusals are turned into ``ProofStoreError`` for a single proof only: the
    /// batcher stores each proof of a refused batch again on its own.
    static func recordTogether(_ batch: [PendingProof], lockWaitMilliseconds: Int?, in database: PostgresClient) async throws {
        do {
            try await database.withTransaction(retryingStalePlans: true) { session in
                if let lockWaitMilliseconds {
                    session.enqueue("SET LOCAL lock_timeout = \(unescaped: String(lockWaitMilliseconds))")
                }
                var entries: [AuditEntry] = []
                for pending in batch {
                    record(pending, in: session)
                    entries.append(AuditEntry(action: .proofRecorded, subject: "delivery:\(pending.reference)",
                                              details: try recordedDetails(pending.proof, reference: pending.reference, salt: pending.sealed.salt),
                                              origin: pending.origin))
                }
                _ = try await AuditLog.append(entries, in: session)
                // Queued behind the audit insert: they go with the COMMIT, no extra round trip.
                for (pending, entry) in zip(batch, entries) {
                    let proof = pending.proof
                    WebhookOutbox.enqueue(.deliveryDelivered(reference: pending.reference, proofID: proof.id, receivedAt: proof.body.receivedAt,
                                                             digests: entry.details.filter { $0.key.hasSuffix("_sha256") || $0.key.hasSuffix("_commitment") }),
                                          in: session)
                }
            }
        } catch let error as PostgresError where batch.count == 1 && error.kind == .uniqueViolation
                    && error.constraint?.hasPrefix("proofs") == true {
            throw ProofStoreError.proofAlreadyRecorded(batch[0].proof.id)
        } catch let error as PostgresError where batch.count == 1 && error.kind == .checkViolation
                    && error.constraint == "device_key_not_usable" {
            // The key was revoked between the intake's check and this insert (migration 0017's trigger).
            throw ProofStoreError.deviceKeyNotUsable
        }
    }

    /// The details of a proof's `proof_recorded` event: its id and the digests of everything it
    /// stores — the original body, the PNG, the canonical ink — with the commitment to its facts
    /// (``ProofFacts``, under the delivery's `salt`: a signer's name is guessable, the ink is not)
    /// and, for a device-signed upload, the device key's id and the signature itself (so the event
    /// alone, with the key's `device_key_registered` event, lets anyone re-check it: docs/audit.md).
    static func recordedDetails(_ proof: NewProof, reference: String, salt: CommitmentSalt) throws(SealingError) -> [String: String] {
        var details = ["proof_id": proof.id.uuidString.lowercased(), "points_sha256": proof.body.sha256.hexString,
                       "png_sha256": proof.rendering.pngSHA256.hexString, "ink_sha256": SHA256.hash(proof.rendering.ink).hexString,
                       "metadata_commitment": try salt.commit(ProofFacts(proof, reference: reference).digest).hexString]
        if let signed = proof.deviceSignature {
            details["device_key_id"] = signed.keyID.uuidString.lowercased()
            details["device_signature"] = signed.signature.hexString
        }
        return details
    }

    /// Queues the statement that stores the proof (it goes to the server with the audit append's
    /// first statement, in one round trip) and checks its counts when the answer arrives.
    private static func record(_ pending: PendingProof, in session: PostgresSession) {
        session.enqueue(recordStatement(pending)) { [id = pending.proof.id] result in
            guard let row = result.first else { throw PostgresError(.decodingFailed, message: "the proof statement returned no row") }
            let (deliveries, delivered, status) = try row.decode((Int, Int, String?).self)
            guard deliveries == 1 else { throw ProofStoreError.deliveryNotFound }
            // Failed or cancelled (migration 0014): the delivery ended without a proof and stays so.
            if delivered == 0, let closed = status.flatMap(DeliveryStatus.init(rawValue:)), closed.isClosed {
                throw ProofStoreError.deliveryClosed(closed)
            }
            guard delivered == 1 else { throw ProofStoreError.proofAlreadyRecorded(id) }
        }
    }

    /// The one statement that stores `pending`: finds its delivery, inserts the proof, marks the
    /// delivery delivered if it is still pending (the arbiter between two uploads of one delivery)
    /// and completes the idempotency record; answers the counts ``record(_:in:)`` checks.
    ///
    /// The pending check is written `(status = 'pending') IS TRUE` so that it can only filter the
    /// row found by primary key. As a plain `status = 'pending'` it matched the `(status, seq)`
    /// index, and statistics taken while nearly every delivery was delivered (a night's
    /// autovacuum, then a morning's import of new deliveries) made that index look like one row:
    /// the planner then walked every pending delivery for each upload and joined each to the new
    /// proof (`ProofRecordPlanTests`).
    static func recordStatement(_ pending: PendingProof) -> PostgresQuery {
        let (proof, reference, idempotency, sealed) = (pending.proof, pending.reference, pending.idempotency, pending.sealed)
        let capture = proof.capture, location = capture.location, device = capture.device
        let body = proof.body, rendering = proof.rendering, assessment = proof.assessment, response = idempotency?.response
        // A delivery made with its data key: the proof goes in only under that very key. One
        // stored before had none: the key goes in first and the proof only with it, so an upload
        // that lost the race for its delivery finds the winner's key there (ON CONFLICT: nothing
        // inserted), stores no proof sealed under a key nobody keeps, and gets
        // proofAlreadyRecorded like any loser.
        let dataKey: PostgresQuery = sealed.isNewKey ? """
            INSERT INTO delivery_data_keys (delivery_id, kek_id, wrapped_key)
                SELECT id, \(sealed.key.keyID)::text, \(PostgresBytes(sealed.key.wrapped)) FROM delivery
                ON CONFLICT (delivery_id) DO NOTHING
                RETURNING delivery_id
            """ : """
            SELECT k.delivery_id FROM delivery_data_keys k JOIN delivery ON k.delivery_id = delivery.id
                WHERE k.kek_id = \(sealed.key.keyID)::text AND k.wrapped_key = \(PostgresBytes(sealed.key.wrapped))
            """
        return """
            WITH delivery AS (
                SELECT id, status FROM deliveries WHERE reference = \(reference)::text
            ), data_key AS (
                \(dataKey)
            ), proof AS (
                INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text,
                    received_at, location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m,
                    flags, device_id, device_model, device_os, device_app, body, body_content_type, body_content_encoding,
                    body_sha256, ink_format, ink, point_count, stroke_count, png, png_sha256, png_width, png_height,
                    render_options, algorithm_version, uploaded_by, idempotency_key, device_key_id, device_signature, sealing)
                SELECT \(proof.id), delivery.id, \(capture.signerName), \(capture.capturedAt.date),
                    \(capture.capturedAt.offsetMinutes), \(capture.capturedAt.text), \(body.receivedAt),
                    \(location?.point.lat)::float8, \(location?.point.lon)::float8, \(location?.accuracyMeters)::float8,
                    \(assessment.distanceToDestinationMeters)::float8, \(assessment.geofenceRadiusMeters),
                    string_to_array(\(assessment.flags.map { $0.rawValue }.joined(separator: ",")), ','),
                    \(device.id)::text, \(device.model)::text, \(device.os)::text, \(device.app)::text,
                    \(PostgresBytes(sealed.body)), \(body.contentType), \(body.contentEncoding)::text, \(PostgresBytes(body.sha256)),
                    \(rendering.inkFormat), \(PostgresBytes(sealed.ink)), \(rendering.pointCount), \(rendering.strokeCount),
                    \(PostgresBytes(sealed.png)), \(PostgresBytes(rendering.pngSHA256)), \(rendering.pngWidth),
                    \(rendering.pngHeight), \(PostgresJSONB(rendering.renderOptionsJSON)), \(rendering.algorithmVersion),
                    \(proof.uploadedBy), \(proof.idempotencyKey)::text, \(proof.deviceSignature?.keyID)::uuid,
                    \(proof.deviceSignature.map { PostgresBytes($0.signature) })::bytea, \(ProofSealer.sealed)::smallint
                FROM delivery JOIN data_key ON data_key.delivery_id = delivery.id
                RETURNING delivery_id
            ), delivered AS (
                UPDATE deliveries SET status = 'delivered', delivered_at = \(body.receivedAt), updated_at = \(body.receivedAt)
                FROM proof WHERE deliveries.id = proof.delivery_id AND (deliveries.status = 'pending') IS TRUE
                RETURNING deliveries.id
            ), completed AS (
                UPDATE idempotency_records SET state = 'completed', completed_at = now(), response_status = \(response?.status)::int,
                    response_type = \(response?.contentType)::text, response_location = \(response?.location)::text,
                    response_body = \(response.map { PostgresBytes($0.body) })::bytea
                FROM delivered WHERE api_key_id = \(idempotency?.apiKeyID)::uuid AND idempotency_key = \(idempotency?.key)::text
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM delivery), (SELECT count(*) FROM delivered), (SELECT status::text FROM delivery)
            """
    }

    /// The metadata of the proof of delivery `reference`; `nil` when there is none.
    public func metadata(reference: String) async throws -> ProofMetadata? {
        let result = try await database.query("""
            SELECT \(unescaped: Self.metadataColumns)
            FROM deliveries d JOIN proofs p ON \(unescaped: DeliveryRepository.proofJoin) JOIN api_keys k ON k.id = p.uploaded_by
            WHERE d.reference = \(reference)::text
            """)
        guard let row = result.first else { return nil }
        return try Self.metadata(row)
    }

    /// The columns ``metadata(_:)`` decodes by name (proofs `p`, deliveries `d`, api_keys `k`).
    static let metadataColumns = """
        p.id, d.reference, coalesce(p.signer_name, '') AS signer_name, p.captured_at, p.captured_at_offset_min, p.captured_at_text, p.received_at,
        p.location_lat, p.location_lon, p.location_accuracy_m, p.distance_to_destination_m, p.geofence_radius_m,
        array_to_string(p.flags, ',') AS flags, p.device_id, p.device_model, p.device_os, p.device_app,
        p.body_content_type, p.body_content_encoding, \(ProofSealer.clearSize("p.body")) AS body_size, p.body_sha256, p.ink_format,
        p.point_count, p.stroke_count, p.png_sha256, p.png_width, p.png_height, p.render_options::text AS render_options,
        p.algorithm_version, k.id AS uploader_id, k.name AS uploader_name, k.role AS uploader_role
        """

    /// Decodes the ``metadataColumns`` of `row`, by name.
    static func metadata(_ row: PostgresRow) throws -> ProofMetadata {
        var location: CaptureLocation?
        if let point = GeoPoint.stored(lat: try row.decode("location_lat"), lon: try row.decode("location_lon")) {
            location = CaptureLocation(point: point, accuracyMeters: try row.decode("location_accuracy_m"))
        }
        let flags: String = try row.decode("flags")
        return ProofMetadata(
            id: try row.decode("id"), deliveryReference: try row.decode("reference"), signerName: try row.decode("signer_name"),
            capturedAt: try row.decode("captured_at"), capturedAtOffsetMinutes: try row.decode("captured_at_offset_min"),
            capturedAtText: try row.decode("captured_at_text"), receivedAt: try row.decode("received_at"), location: location,
            distanceToDestinationMeters: try row.decode("distance_to_destination_m"), geofenceRadiusMeters: try row.decode("geofence_radius_m"),
            flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init),
            device: DeviceFacts(id: try row.decode("device_id"), model: try row.decode("device_model"), os: try row.decode("device_os"),
                                app: try row.decode("device_app")),
            bodyContentType: try row.decode("body_content_type"), bodyContentEncoding: try row.decode("body_content_encoding"),
            bodySize: try row.decode("body_size"), bodySHA256: try row.decode("body_sha256"), inkFormat: try row.decode("ink_format"),
            pointCount: try row.decode("point_count"), strokeCount: try row.decode("stroke_count"), pngSHA256: try row.decode("png_sha256"),
            pngWidth: try row.decode("png_width"), pngHeight: try row.decode("png_height"), renderOptionsJSON: try row.decode("render_options"),
            algorithmVersion: try row.decode("algorithm_version"),
            uploadedBy: Actor(keyID: try row.decode("uploader_id"), name: try row.decode("uploader_name"),
                              role: Role(rawValue: try row.decode("uploader_role")) ?? .courier))
    }

    /// The key that uploaded the proof of delivery `reference`, if there is a proof.
    public func uploader(reference: String) async throws -> UUID? {
        try await database.query("""
            SELECT p.uploaded_by FROM deliveries d JOIN proofs p ON \(unescaped: DeliveryRepository.proofJoin)
            WHERE d.reference = \(reference)::text
            """).first?.decode(UUID.self, "uploaded_by")
    }

    /// The stored PNG; its bytes are left out when `ifNoneMatch` is its SHA-256.
    public func png(reference: String, ifNoneMatch: [UInt8]? = nil) async throws -> StoredPNG? {
        let result = try await database.query("""
            SELECT p.png_sha256, CASE WHEN p.png_sha256 = \(ifNoneMatch.map(PostgresBytes.init)) THEN NULL ELSE p.png END,
                \(unescaped: Self.sealingColumns)
            FROM deliveries d JOIN proofs p ON \(unescaped: DeliveryRepository.proofJoin) \(unescaped: Self.dataKeyJoin)
            WHERE d.reference = \(reference)::text
            """)
        guard let row = result.first else { return nil }
        let (sha256, bytes, id, sealing, keyID, wrapped) = try row.decode(([UInt8], [UInt8]?, UUID, Int, String?, [UInt8]?).self)
        let opened = try bytes.map { stored throws(SealingError) in
            try sealer.open(stored, .png, sealing: sealing, proof: id, reference: reference, key: Self.key(keyID, wrapped))
        }
        return StoredPNG(sha256: sha256, bytes: opened)
    }

    /// The original request body.
    public func body(reference: String) async throws -> StoredBody? {
        let result = try await database.query("""
            SELECT p.body, p.body_content_type, p.body_content_encoding, p.body_sha256, \(unescaped: Self.sealingColumns)
            FROM deliveries d JOIN proofs p ON \(unescaped: DeliveryRepository.proofJoin) \(unescaped: Self.dataKeyJoin)
            WHERE d.reference = \(reference)::text
            """)
        guard let row = result.first else { return nil }
        let (bytes, contentType, contentEncoding, sha256, id, sealing, keyID, wrapped)
            = try row.decode(([UInt8], String, String?, [UInt8], UUID, Int, String?, [UInt8]?).self)
        let opened = try sealer.open(bytes, .body, sealing: sealing, proof: id, reference: reference, key: Self.key(keyID, wrapped))
        return StoredBody(bytes: opened, contentType: contentType, contentEncoding: contentEncoding, sha256: sha256)
    }

    /// The canonical ink and its render options.
    public func ink(reference: String) async throws -> StoredInk? {
        let result = try await database.query("""
            SELECT p.ink, p.render_options::text, p.point_count, \(unescaped: Self.sealingColumns)
            FROM deliveries d JOIN proofs p ON \(unescaped: DeliveryRepository.proofJoin) \(unescaped: Self.dataKeyJoin)
            WHERE d.reference = \(reference)::text
            """)
        guard let row = result.first else { return nil }
        let (ink, renderOptionsJSON, pointCount, id, sealing, keyID, wrapped)
            = try row.decode(([UInt8], String, Int, UUID, Int, String?, [UInt8]?).self)
        let opened = try sealer.open(ink, .ink, sealing: sealing, proof: id, reference: reference, key: Self.key(keyID, wrapped))
        return StoredInk(ink: opened, renderOptionsJSON: renderOptionsJSON, pointCount: pointCount)
    }

    /// What opening a proof's sealed columns needs (proofs `p`, its delivery's key `k`).
    static let sealingColumns = "p.id, p.sealing::int4, k.kek_id, k.wrapped_key"
    /// The delivery's wrapped data key, if it has one (`d`: deliveries).
    static let dataKeyJoin = "LEFT JOIN delivery_data_keys k ON k.delivery_id = d.id"

    /// The wrapped key of a row's `kek_id` and `wrapped_key`, when it has both.
    static func key(_ keyID: String?, _ wrapped: [UInt8]?) -> ProofSealer.WrappedKey? {
        guard let keyID, let wrapped else { return nil }
        return ProofSealer.WrappedKey(keyID: keyID, wrapped: wrapped)
    }
}
