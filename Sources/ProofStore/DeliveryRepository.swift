import Foundation
import Postgres

/// Outcome of creating a delivery.
public enum DeliveryCreation: Sendable, Equatable {
    /// A new delivery was stored.
    case created(Delivery)
    /// The same reference with the same content already existed (an idempotent repeat).
    case existing(Delivery)
    /// The reference exists with different content.
    case conflict(Delivery)
}

/// Stores and finds deliveries.
public struct DeliveryRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    static let columns = """
        d.id, d.seq, d.reference, d.recipient_name, d.address, d.destination_lat, d.destination_lon, d.status,
        d.created_at, d.updated_at, d.delivered_at,
        p.id, p.signer_name, p.captured_at, p.received_at, p.distance_to_destination_m, array_to_string(p.flags, ',')
        """

    /// How a delivery `d` finds its proof `p`: by `delivery_id`, and by `received_at`, which the upload
    /// stored as `d.delivered_at` — that names the one monthly partition of `proofs` to look in
    /// (at run time, for each delivery), where `delivery_id` alone would probe every partition.
    static let proofJoin = "p.delivery_id = d.id AND p.received_at = d.delivered_at"
    // Look-ups bind the reference as `$n::text`: left to take the column's domain type
    // (`delivery_reference`, migration 0011), it would go through domain_in, which sets the domain
    // up again at every bind; compared as text it still uses `deliveries_reference`.

    /// Creates `draft`, or reports the existing delivery with its reference. A new delivery is
    /// committed with a `delivery_created` audit event (subject `delivery:<reference>`).
    public func create(_ draft: NewDelivery, by actor: Actor?, origin: AuditOrigin? = nil) async throws -> DeliveryCreation {
        let origin = origin ?? (actor.map { AuditOrigin(actor: $0) } ?? .system)
        let inserted = try await database.withTransaction(retryingStalePlans: true) { session in
            let inserted = try await session.query("""
                INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, created_by)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (reference) DO NOTHING
                RETURNING id
                """, [draft.reference, draft.recipientName, draft.address, draft.destination?.lat, draft.destination?.lon,
                      actor?.keyID])
            if inserted.rowCount == 1 {
                try await AuditLog.append(.deliveryCreated, subject: "delivery:\(draft.reference)",
                                          details: ["delivery_id": try inserted.decode(UUID.self, row: 0, column: 0).uuidString.lowercased()],
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
            SELECT \(Self.columns) FROM deliveries d LEFT JOIN proofs p ON \(Self.proofJoin)
            WHERE d.reference = $1::text
            """, [reference])
        return try result.first.map(Self.delivery)
    }

    /// One page of deliveries matching `search`, newest first.
    public func search(_ search: DeliverySearch) async throws -> DeliveryPage {
        let filter = SQLFilter()
        if let status = search.status { filter.add("d.status = \(filter.bind(status.rawValue))") }
        if let since = search.since { filter.add("d.created_at >= \(filter.bind(since))") }
        if let until = search.until { filter.add("d.created_at < \(filter.bind(until))") }
        if let after = search.afterSeq { filter.add("d.seq < \(filter.bind(after))") }
        if let box = search.boundingBox {
            filter.add("d.destination_lat BETWEEN \(filter.bind(box.south)) AND \(filter.bind(box.north))")
            if box.east - box.west >= 360 {
                filter.add("d.destination_lon IS NOT NULL")
            } else {
                let west = GeoPoint.normalizedLongitude(box.west)
                let east = box.east == 180 ? 180 : GeoPoint.normalizedLongitude(box.east)
                if west <= east {
                    filter.add("d.destination_lon BETWEEN \(filter.bind(west)) AND \(filter.bind(east))")
                } else {
                    // Crosses the 180th meridian: west..180 plus -180..east.
                    filter.add("(d.destination_lon >= \(filter.bind(west)) OR d.destination_lon <= \(filter.bind(east)))")
                }
            }
        }
        if let circle = search.near {
            // Latitude band first (uses the index), then the exact haversine distance.
            let degrees = circle.radiusMeters / GeoPoint.earthRadius * 180 / .pi
            filter.add("d.destination_lat BETWEEN \(filter.bind(circle.center.lat - degrees)) AND \(filter.bind(circle.center.lat + degrees))")
            let lat = filter.bind(circle.center.lat), lon = filter.bind(circle.center.lon)
            filter.add("""
                2 * \(GeoPoint.earthRadius) * asin(least(1, sqrt(
                    power(sin(radians(d.destination_lat - \(lat)) / 2), 2)
                    + cos(radians(\(lat))) * cos(radians(d.destination_lat)) * power(sin(radians(d.destination_lon - \(lon)) / 2), 2)
                ))) <= \(filter.bind(circle.radiusMeters))
                """)
        }
        let limit = filter.bind(search.limit + 1)
        let whereClause = filter.whereClause
        let result = try await database.query("""
            SELECT \(Self.columns) FROM deliveries d LEFT JOIN proofs p ON \(Self.proofJoin)
            \(whereClause)
            ORDER BY d.seq DESC LIMIT \(limit)
            """, filter.parameters)
        let page = keysetPage(try result.rows.map(Self.delivery), limit: search.limit, seq: \.seq)
        return DeliveryPage(deliveries: page.rows, nextSeq: page.nextSeq)
    }

    static func delivery(_ row: PostgresRow) throws -> Delivery {
        let lat = try row.decode(Double?.self, 5), lon = try row.decode(Double?.self, 6)
        var destination: GeoPoint?
        if let lat, let lon { destination = GeoPoint(lat: lat, lon: lon) }
        var proof: ProofSummary?
        if let proofID = try row.decode(UUID?.self, 11) {
            let flags = try row.decode(String.self, 16)
            proof = ProofSummary(id: proofID, signerName: try row.decode(String.self, 12), capturedAt: try row.decode(Date.self, 13),
                                 receivedAt: try row.decode(Date.self, 14),
                                 distanceToDestinationMeters: try row.decode(Double?.self, 15),
                                 flags: flags.isEmpty ? [] : flags.split(separator: ",").map(String.init))
        }
        let statusName = try row.decode(String.self, 7)
        return Delivery(id: try row.decode(UUID.self, 0), seq: try row.decode(Int64.self, 1), reference: try row.decode(String.self, 2),
                        recipientName: try row.decode(String.self, 3), address: try row.decode(String.self, 4),
                        destination: destination, status: DeliveryStatus(rawValue: statusName) ?? .pending,
                        createdAt: try row.decode(Date.self, 8), updatedAt: try row.decode(Date.self, 9),
                        deliveredAt: try row.decode(Date?.self, 10), proof: proof)
    }
}
