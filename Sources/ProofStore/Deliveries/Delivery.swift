import Foundation

/// A stored delivery, with a summary of its proof when it has one.
public struct Delivery: Sendable, Equatable {
    /// Database id.
    public var id: UUID
    /// Listing order (newest has the largest value).
    public var seq: Int64
    /// The carrier's tracking number.
    public var reference: String
    /// Recipient name.
    public var recipientName: String
    /// Postal address.
    public var address: String
    /// Destination, if given.
    public var destination: GeoPoint?
    /// Pending, delivered, failed or cancelled.
    public var status: DeliveryStatus
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// When its proof was recorded.
    public var deliveredAt: Date?
    /// Its proof, if any.
    public var proof: ProofSummary?
    /// How it ended, when it is `failed` or `cancelled`.
    public var closure: DeliveryClosure?
    /// Its failed attempts, oldest first; loaded only where asked for (a single delivery), else empty.
    public var attempts: [DeliveryAttempt]
    /// When its personal data was erased (migration 0026): its names, address, destination,
    /// closing reason and its proof's signer then read as empty, its images and points are gone.
    public var erasedAt: Date?

    /// Creates a delivery value.
    public init(id: UUID, seq: Int64, reference: String, recipientName: String, address: String, destination: GeoPoint?,
                status: DeliveryStatus, createdAt: Date, updatedAt: Date, deliveredAt: Date?, proof: ProofSummary?,
                closure: DeliveryClosure? = nil, attempts: [DeliveryAttempt] = [], erasedAt: Date? = nil) {
        self.id = id
        self.seq = seq
        self.reference = reference
        self.recipientName = recipientName
        self.address = address
        self.destination = destination
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.deliveredAt = deliveredAt
        self.proof = proof
        self.closure = closure
        self.attempts = attempts
        self.erasedAt = erasedAt
    }

    /// True when `draft` describes this delivery (same reference and content).
    public func matches(_ draft: NewDelivery) -> Bool {
        reference == draft.reference && recipientName == draft.recipientName && address == draft.address
            && destination == draft.destination
    }
}
