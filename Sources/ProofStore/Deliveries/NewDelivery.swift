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
