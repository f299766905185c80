import Foundation
import Postgres

/// Stores and finds deliveries.
public struct DeliveryRepository: Sendable {
    let database: PostgresClient
    let sealer: ProofSealer

    /// Creates the repository over `database`; new deliveries get a data key wrapped by the keys
    /// of `dataKeys` (without keys, reads work and ``create(_:by:origin:)`` throws
    /// ``SealingError/notConfigured``: nothing is stored without its key).
    public init(database: PostgresClient, dataKeys: DataKeyProvider = DataKeyProvider(.unconfigured)) {
        self.database = database
        self.sealer = ProofSealer(keys: dataKeys)
    }

    /// The columns ``delivery(_:)`` decodes by name (deliveries `d`, proofs `p`). An erased
    /// delivery's personal texts read as empty strings (migration 0026).
    static let columns = """
        d.id, d.seq, d.reference, coalesce(d.recipient_name, '') AS recipient_name, coalesce(d.address, '') AS address,
        d.destination_lat, d.destination_lon, d.status, d.created_at, d.updated_at, d.delivered_at, d.closed_at,
        coalesce(d.close_reason, '') AS close_reason, d.closed_by, d.erased_at,
        p.id AS proof_id, coalesce(p.signer_name, '') AS signer_name, p.captured_at, p.received_at, p.distance_to_destination_m,
        array_to_string(p.flags, ',') AS flags
        """

    /// How a delivery `d` finds its proof `p`: by `delivery_id`, and by `received_at`, which the upload
    /// stored as `d.delivered_at` — that names the one monthly partition of `proofs` to look in
    /// (at run time, for each delivery), where `delivery_id` alone would probe every partition.
    static let proofJoin = "p.delivery_id = d.id AND p.received_at = d.delivered_at"
    // Look-ups bind the reference as `\(reference)::text`: left to take the column's domain type
    // (`delivery_reference`, migration 0011), it would go through domain_in, which sets the domain
    // up again at every bind; compared as text it still uses `deliveries_reference`.

    /// Creates `draft`, or reports the existing delivery with its reference. A new delivery is
    /// committed with its data key (``ProofSealer/newKey(for:)``: every later proof is sealed under
    /// it), a `delivery_created` audit event (subject `delivery:<reference>`) that binds the
    /// commitment to its facts under that key's salt, and a `delivery.created` webhook event in
    /// the outbox, in one transaction.
    public func create(_ draft: NewDelivery, by actor: Actor?, origin: AuditOrigin? = nil) async throws -> DeliveryCreation {
        let origin = origin ?? (actor.map { AuditOrigin(actor: $0) } ?? .system)
        let (key, salt) = try sealer.newKey(for: draft.reference)
        let commitment = try salt.commit(DeliveryFacts.digest(reference: draft.reference, recipientName: draft.recipientName,
                                                              address: draft.address, destination: draft.destination))
        let inserted = try await database.withTransaction(retryingStalePlans: true) { session in
            let inserted = try await session.query("""
                WITH delivery AS (
                    INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, created_by)
                    VALUES (\(draft.reference), \(draft.recipientName), \(draft.address), \(draft.destination?.lat),
                        \(draft.destination?.lon), \(actor?.keyID))
                    ON CONFLICT (reference) DO NOTHING
                    RETURNING id, created_at
                ), data_key AS (
                    INSERT INTO delivery_data_keys (delivery_id, kek_id, wrapped_key)
                    SELECT id, \(key.keyID)::text, \(PostgresBytes(key.wrapped)) FROM delivery
                    RETURNING delivery_id
                )
                SELECT id, created_at FROM delivery
                """)
            if let row = inserted.first {
                let id = try row.decode(UUID.self, "id")
                WebhookOutbox.enqueue(.deliveryCreated(reference: draft.reference, deliveryID: id, recipientName: draft.recipientName,
                                                       address: draft.address, createdAt: try row.decode("created_at")), in: session)
                try await AuditLog.append(.deliveryCreated, subject: "delivery:\(draft.reference)",
                                          details: ["delivery_id": id.uuidString.lowercased(), "delivery_commitment": commitment.hexString],
                                          origin: origin, in: session)
            }
            return inserted
        }
        guard let existing = try await find(reference: draft.reference) else {
            throw PostgresError(.queryFailed, message: "delivery \(draft.reference) vanished after insert")
        }
        if inserted.rowCount == 1 { return .created(existing) }
        return existing.matches(draft) ? .existing(existing) : .conflict(existing)
    }

    /// The delivery with `reference`, with its proof summary.
    public func find(reference: String) async throws -> Delivery? {
        let result = try await database.query("""
            SELECT \(unescaped: Self.columns) FROM deliveries d LEFT JOIN proofs p ON \(unescaped: Self.proofJoin)
            WHERE d.reference = \(reference)::text
            """)
        return try result.first.map(Self.delivery)
    }

    /// The delivery with `reference` with its failed attempts, oldest first (`GET /v1/deliveries/{reference}`).
    public func findWithAttempts(reference: String) async throws -> Delivery? {
        guard var delivery = try await find(reference: reference) else { return nil }
        delivery.attempts = try await LifecycleRepository(database: database).attempts(deliveryID: delivery.id)
        return delivery
    }

    /// Decodes the ``columns`` of `row`, by name.
    static func delivery(_ row: PostgresRow) throws -> Delivery {
        var proof: ProofSummary?
        if let proofID: UUID = try row.decode("proof_id") {
            let flags: String = try row.decode("flags")
            proof = ProofSummary(id: proofID, signerName: try row.decode("signer_name"), capturedAt: try row.decode("captured_at"),
                                 receivedAt: try row.decode("received_at"),
                                 distanceToDestinationMeters: try row.decode("distance_to_destination_m"),
                                 flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init))
        }
        var closure: DeliveryClosure?
        if let closedAt: Date = try row.decode("closed_at") {
            closure = DeliveryClosure(closedAt: closedAt, reason: try row.decode("close_reason"), closedBy: try row.decode("closed_by"))
        }
        return Delivery(id: try row.decode("id"), seq: try row.decode("seq"), reference: try row.decode("reference"),
                        recipientName: try row.decode("recipient_name"), address: try row.decode("address"),
                        destination: GeoPoint.stored(lat: try row.decode("destination_lat"), lon: try row.decode("destination_lon")),
                        status: DeliveryStatus(rawValue: try row.decode("status")) ?? .pending,
                        createdAt: try row.decode("created_at"), updatedAt: try row.decode("updated_at"),
                        deliveredAt: try row.decode("delivered_at"), proof: proof, closure: closure, erasedAt: try row.decode("erased_at"))
    }
}
