/// A delivery as the server returns it (`GET /v1/deliveries/{reference}`); members the SDK does
/// not use are ignored, so the server may add more.
public struct Delivery: Sendable, Equatable, Decodable {
    /// The proof summary of a delivered delivery.
    public struct ProofSummary: Sendable, Equatable, Decodable {
        public var proofID: String
        public var capturedAt: String
        public var receivedAt: String
        public var flags: [String]

        enum CodingKeys: String, CodingKey {
            case flags
            case proofID = "proof_id"
            case capturedAt = "captured_at"
            case receivedAt = "received_at"
        }
    }

    public var id: String
    public var reference: String
    public var recipient: NewDelivery.Recipient
    public var address: String
    public var destination: NewDelivery.Destination?
    /// `pending` or `delivered`.
    public var status: String
    public var proof: ProofSummary?
}
