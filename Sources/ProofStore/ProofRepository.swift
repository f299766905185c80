import Foundation
import Postgres

/// Why a proof was not stored.
public enum ProofStoreError: Error, Sendable, Equatable {
    /// No delivery has the reference.
    case deliveryNotFound
    /// The delivery already has a proof.
    case proofAlreadyRecorded(UUID)
}

/// The response an idempotent request finished with (replayed for a repeat with the same key).
public struct IdempotentResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var location: String?
    public var body: [UInt8]

    /// Creates a stored response.
    public init(status: Int, contentType: String, location: String?, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.location = location
        self.body = body
    }
}

/// Stores proofs (immutable once stored) and reads them back.
public struct ProofRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// The delivery's id and whether it already has a proof (for early 404/409 before rendering).
    public func deliveryState(reference: String) async throws -> (deliveryID: UUID, destination: GeoPoint?, proofID: UUID?)? {
        let result = try await database.query("""
            SELECT d.id, d.destination_lat, d.destination_lon, p.id
            FROM deliveries d LEFT JOIN proofs p ON \(DeliveryRepository.proofJoin)
            WHERE d.reference = $1::text
            """, [reference])
        guard let row = result.first else { return nil }
        var destination: GeoPoint?
        if let lat = try row.decode(Double?.self, 1), let lon = try row.decode(Double?.self, 2) {
            destination = GeoPoint(lat: lat, lon: lon)
        }
        return (try row.decode(UUID.self, 0), destination, try row.decode(UUID?.self, 3))
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
    /// details `proof_id`, `points_sha256`, `png_sha256`) on behalf of `origin`. The transaction
    /// costs two round trips: `BEGIN`, this statement and the audit chain's lock in one, the audit
    /// insert and `COMMIT` in the other.
    public func record(_ proof: NewProof, reference: String,
                       idempotency: (apiKeyID: UUID, key: String, response: IdempotentResponse)? = nil,
                       origin: AuditOrigin = .system) async throws {
        do {
            try await database.withTransaction(retryingStalePlans: true) { session in
                record(proof, reference: reference, idempotency: idempotency, in: session)
                try await AuditLog.append(.proofRecorded, subject: "delivery:\(reference)",
                                          details: ["proof_id": proof.id.uuidString.lowercased(),
                                                    "points_sha256": proof.bodySHA256.hexString, "png_sha256": proof.pngSHA256.hexString],
                                          origin: origin, in: session)
            }
        } catch let error as PostgresError where error.kind == .uniqueViolation && error.constraint?.hasPrefix("proofs") == true {
            throw ProofStoreError.proofAlreadyRecorded(proof.id)
        }
    }

    /// Queues the statement that stores the proof (it goes to the server with the audit append's
    /// first statement, in one round trip) and checks its counts when the answer arrives.
    private func record(_ proof: NewProof, reference: String, idempotency: (apiKeyID: UUID, key: String, response: IdempotentResponse)?,
                        in session: PostgresSession) {
        session.enqueue("""
            WITH delivery AS (
                SELECT id FROM deliveries WHERE reference = $33::text
            ), proof AS (
                INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text,
                    received_at, location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m,
                    flags, device_id, device_model, device_os, device_app, body, body_content_type, body_content_encoding,
                    body_sha256, ink_format, ink, point_count, stroke_count, png, png_sha256, png_width, png_height,
                    render_options, algorithm_version, uploaded_by, idempotency_key)
                SELECT $1, delivery.id, $2, $3, $4, $5, $6, $7::float8, $8::float8, $9::float8, $10::float8, $11,
                    string_to_array($12, ','), $13::text, $14::text, $15::text, $16::text,
                    $17, $18, $19::text, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32::text
                FROM delivery
                RETURNING delivery_id
            ), delivered AS (
                UPDATE deliveries SET status = 'delivered', delivered_at = $6, updated_at = $6
                FROM proof WHERE deliveries.id = proof.delivery_id AND deliveries.status = 'pending'
                RETURNING deliveries.id
            ), completed AS (
                UPDATE idempotency_records SET state = 'completed', completed_at = now(), response_status = $36::int,
                    response_type = $37::text, response_location = $38::text, response_body = $39::bytea
                FROM delivered WHERE api_key_id = $34::uuid AND idempotency_key = $35::text
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM delivery), (SELECT count(*) FROM delivered)
            """, [proof.id, proof.signerName, proof.capturedAt, proof.capturedAtOffsetMinutes, proof.capturedAtText,
                  proof.receivedAt, proof.location?.point.lat, proof.location?.point.lon, proof.location?.accuracyMeters,
                  proof.distanceToDestinationMeters, proof.geofenceRadiusMeters, proof.flags.joined(separator: ","),
                  proof.device.id, proof.device.model, proof.device.os, proof.device.app,
                  PostgresBytes(proof.body), proof.bodyContentType, proof.bodyContentEncoding, PostgresBytes(proof.bodySHA256),
                  proof.inkFormat, PostgresBytes(proof.ink), proof.pointCount, proof.strokeCount,
                  PostgresBytes(proof.png), PostgresBytes(proof.pngSHA256), proof.pngWidth, proof.pngHeight,
                  PostgresJSONB(proof.renderOptionsJSON), proof.algorithmVersion, proof.uploadedBy, proof.idempotencyKey,
                  reference, idempotency?.apiKeyID, idempotency?.key, idempotency?.response.status,
                  idempotency?.response.contentType, idempotency?.response.location,
                  idempotency.map { PostgresBytes($0.response.body) }]) { [id = proof.id] result in
            guard try result.decode(Int.self, row: 0, column: 0) == 1 else { throw ProofStoreError.deliveryNotFound }
            guard try result.decode(Int.self, row: 0, column: 1) == 1 else { throw ProofStoreError.proofAlreadyRecorded(id) }
        }
    }

    /// The metadata of the proof of delivery `reference`; `nil` when there is none.
    public func metadata(reference: String) async throws -> ProofMetadata? {
        let result = try await database.query("""
            SELECT \(Self.metadataColumns)
            FROM deliveries d JOIN proofs p ON \(DeliveryRepository.proofJoin) JOIN api_keys k ON k.id = p.uploaded_by
            WHERE d.reference = $1::text
            """, [reference])
        guard let row = result.first else { return nil }
        return try Self.metadata(row)
    }

    /// The 32 columns ``metadata(_:)`` decodes (proofs `p`, deliveries `d`, api_keys `k`).
    static let metadataColumns = """
        p.id, d.reference, p.signer_name, p.captured_at, p.captured_at_offset_min, p.captured_at_text, p.received_at,
        p.location_lat, p.location_lon, p.location_accuracy_m, p.distance_to_destination_m, p.geofence_radius_m,
        array_to_string(p.flags, ','), p.device_id, p.device_model, p.device_os, p.device_app,
        p.body_content_type, p.body_content_encoding, octet_length(p.body), p.body_sha256, p.ink_format,
        p.point_count, p.stroke_count, p.png_sha256, p.png_width, p.png_height, p.render_options::text,
        p.algorithm_version, k.id, k.name, k.role
        """

    /// Decodes the 32 metadata columns `metadata(reference:)` selects, in that order, from `row`.
    static func metadata(_ row: PostgresRow) throws -> ProofMetadata {
        var location: CaptureLocation?
        if let lat = try row.decode(Double?.self, 7), let lon = try row.decode(Double?.self, 8) {
            location = CaptureLocation(point: GeoPoint(lat: lat, lon: lon), accuracyMeters: try row.decode(Double?.self, 9))
        }
        let flags = try row.decode(String.self, 12)
        return ProofMetadata(
            id: try row.decode(UUID.self, 0), deliveryReference: try row.decode(String.self, 1),
            signerName: try row.decode(String.self, 2), capturedAt: try row.decode(Date.self, 3),
            capturedAtOffsetMinutes: try row.decode(Int.self, 4), capturedAtText: try row.decode(String.self, 5),
            receivedAt: try row.decode(Date.self, 6), location: location, distanceToDestinationMeters: try row.decode(Double?.self, 10),
            geofenceRadiusMeters: try row.decode(Double.self, 11), flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init),
            device: DeviceFacts(id: try row.decode(String?.self, 13), model: try row.decode(String?.self, 14),
                                os: try row.decode(String?.self, 15), app: try row.decode(String?.self, 16)),
            bodyContentType: try row.decode(String.self, 17), bodyContentEncoding: try row.decode(String?.self, 18),
            bodySize: try row.decode(Int.self, 19), bodySHA256: try row.decode([UInt8].self, 20), inkFormat: try row.decode(String.self, 21),
            pointCount: try row.decode(Int.self, 22), strokeCount: try row.decode(Int.self, 23), pngSHA256: try row.decode([UInt8].self, 24),
            pngWidth: try row.decode(Int.self, 25), pngHeight: try row.decode(Int.self, 26), renderOptionsJSON: try row.decode(String.self, 27),
            algorithmVersion: try row.decode(String.self, 28),
            uploadedBy: Actor(keyID: try row.decode(UUID.self, 29), name: try row.decode(String.self, 30),
                              role: Role(rawValue: try row.decode(String.self, 31)) ?? .courier))
    }

    /// The key that uploaded the proof of delivery `reference`, if there is a proof.
    public func uploader(reference: String) async throws -> UUID? {
        try await database.query("""
            SELECT p.uploaded_by FROM deliveries d JOIN proofs p ON \(DeliveryRepository.proofJoin) WHERE d.reference = $1::text
            """, [reference]).first?.decode(UUID.self, 0)
    }

    /// The stored PNG; its bytes are left out when `ifNoneMatch` is its SHA-256.
    public func png(reference: String, ifNoneMatch: [UInt8]? = nil) async throws -> StoredPNG? {
        let result = try await database.query("""
            SELECT p.png_sha256, CASE WHEN p.png_sha256 = $2 THEN NULL ELSE p.png END
            FROM deliveries d JOIN proofs p ON \(DeliveryRepository.proofJoin) WHERE d.reference = $1::text
            """, [reference, ifNoneMatch.map(PostgresBytes.init)])
        guard let row = result.first else { return nil }
        return StoredPNG(sha256: try row.decode([UInt8].self, 0), bytes: try row.decode([UInt8]?.self, 1))
    }

    /// The original request body.
    public func body(reference: String) async throws -> StoredBody? {
        let result = try await database.query("""
            SELECT p.body, p.body_content_type, p.body_content_encoding, p.body_sha256
            FROM deliveries d JOIN proofs p ON \(DeliveryRepository.proofJoin) WHERE d.reference = $1::text
            """, [reference])
        guard let row = result.first else { return nil }
        return StoredBody(bytes: try row.decode([UInt8].self, 0), contentType: try row.decode(String.self, 1),
                          contentEncoding: try row.decode(String?.self, 2), sha256: try row.decode([UInt8].self, 3))
    }

    /// The canonical ink and its render options.
    public func ink(reference: String) async throws -> StoredInk? {
        let result = try await database.query("""
            SELECT p.ink, p.render_options::text FROM deliveries d JOIN proofs p ON \(DeliveryRepository.proofJoin) WHERE d.reference = $1::text
            """, [reference])
        guard let row = result.first else { return nil }
        return StoredInk(ink: try row.decode([UInt8].self, 0), renderOptionsJSON: try row.decode(String.self, 1))
    }
}
