/// The server's 201 for a stored proof (also what a replayed idempotent request returns).
public struct ProofReceipt: Sendable, Equatable, Decodable {
    public var proofID: String
    public var reference: String
    public var receivedAt: String
    /// Hex SHA-256 of the request body exactly as the server received it (gzip-compressed when sent so).
    public var pointsSHA256: String
    /// Hex SHA-256 of the stored PNG.
    public var pngSHA256: String
    public var distanceToDestinationMeters: Double?
    /// `outside_geofence`, `poor_location_accuracy`, `no_location`, `clock_ahead`: never a refusal.
    public var flags: [String]
    /// `true` when the server answered from its idempotency record (`Idempotent-Replayed: true`):
    /// an earlier attempt had already stored this proof.
    public var replayed: Bool = false

    enum CodingKeys: String, CodingKey {
        case reference, flags
        case proofID = "proof_id"
        case receivedAt = "received_at"
        case pointsSHA256 = "points_sha256"
        case pngSHA256 = "png_sha256"
        case distanceToDestinationMeters = "distance_to_destination_m"
    }
}
