/// `POST /v1/deliveries` (a dispatcher's or admin's key): a delivery awaiting its proof.
public struct NewDelivery: Sendable, Equatable, Encodable {
    public struct Recipient: Sendable, Equatable, Codable {
        public var name: String
        public init(name: String) { self.name = name }
    }

    public struct Destination: Sendable, Equatable, Codable {
        public var lat: Double
        public var lon: Double
        public init(lat: Double, lon: Double) {
            self.lat = lat
            self.lon = lon
        }
    }

    /// 1–64 characters `A-Z a-z 0-9 . _ : -`, starting with a letter or digit; unique.
    public var reference: String
    public var recipient: Recipient
    public var address: String
    public var destination: Destination?

    public init(reference: String, recipientName: String, address: String, destination: Destination? = nil) {
        self.reference = reference
        self.recipient = Recipient(name: recipientName)
        self.address = address
        self.destination = destination
    }
}
