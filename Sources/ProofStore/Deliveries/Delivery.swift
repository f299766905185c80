import Foundation

/// Where a delivery stands.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    /// No proof yet.
    case pending
    /// A proof was recorded.
    case delivered
}

/// What a dispatcher submits to create a delivery (already validated by the API).
public struct NewDelivery: Sendable, Equatable {
    /// The carrier's tracking number (unique).
    public var reference: String
    /// Who should receive it.
    public var recipientName: String
    /// Postal address, free text.
    public var address: String
    /// Destination coordinates, when known (used for the geofence).
    public var destination: GeoPoint?

    /// Creates a draft.
    public init(reference: String, recipientName: String, address: String, destination: GeoPoint?) {
        self.reference = reference
        self.recipientName = recipientName
        self.address = address
        self.destination = destination
    }
}

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
    /// Pending or delivered.
    public var status: DeliveryStatus
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// When its proof was recorded.
    public var deliveredAt: Date?
    /// Its proof, if any.
    public var proof: ProofSummary?

    /// Creates a delivery value.
    public init(id: UUID, seq: Int64, reference: String, recipientName: String, address: String, destination: GeoPoint?,
                status: DeliveryStatus, createdAt: Date, updatedAt: Date, deliveredAt: Date?, proof: ProofSummary?) {
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
    }

    /// True when `draft` describes this delivery (same reference and content).
    public func matches(_ draft: NewDelivery) -> Bool {
        reference == draft.reference && recipientName == draft.recipientName && address == draft.address
            && destination == draft.destination
    }
}

/// The short form of a proof shown with its delivery.
public struct ProofSummary: Sendable, Equatable {
    /// Proof id.
    public var id: UUID
    /// Who signed.
    public var signerName: String
    /// Device time of the signature.
    public var capturedAt: Date
    /// Server time of the upload.
    public var receivedAt: Date
    /// Haversine distance to the destination, when both are known.
    public var distanceToDestinationMeters: Double?
    /// Flags such as `outside_geofence`.
    public var flags: [String]

    /// Creates a summary.
    public init(id: UUID, signerName: String, capturedAt: Date, receivedAt: Date, distanceToDestinationMeters: Double?, flags: [String]) {
        self.id = id
        self.signerName = signerName
        self.capturedAt = capturedAt
        self.receivedAt = receivedAt
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.flags = flags
    }
}
