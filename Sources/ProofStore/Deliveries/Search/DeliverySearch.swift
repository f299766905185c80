import Foundation

/// Filters and page position for listing deliveries (newest first, keyset pagination on `seq`).
public struct DeliverySearch: Sendable, Equatable {
    /// A longitude/latitude box. `west > east` means the box crosses the 180th meridian.
    public struct BoundingBox: Sendable, Equatable {
        public var west: Double
        public var south: Double
        public var east: Double
        public var north: Double
        /// Creates a box (degrees).
        public init(west: Double, south: Double, east: Double, north: Double) {
            self.west = west
            self.south = south
            self.east = east
            self.north = north
        }
    }

    /// A circle around a point.
    public struct Circle: Sendable, Equatable {
        public var center: GeoPoint
        public var radiusMeters: Double
        /// Creates a circle.
        public init(center: GeoPoint, radiusMeters: Double) {
            self.center = center
            self.radiusMeters = radiusMeters
        }
    }

    /// Only deliveries with this status.
    public var status: DeliveryStatus?
    /// Only deliveries with at least one failed attempt for this reason.
    public var attemptReason: AttemptReason?
    /// Created at or after.
    public var since: Date?
    /// Created before.
    public var until: Date?
    /// Destination inside the box.
    public var boundingBox: BoundingBox?
    /// Destination within the circle.
    public var near: Circle?
    /// Case-insensitive text: a prefix of the reference, or a part of the recipient, the address or
    /// the signer's name of the delivery's proof (``DeliveryTextQuery``).
    public var text: DeliveryTextQuery?
    /// Only deliveries whose proof carries this flag.
    public var flag: ProofFlag?
    /// True when a filter narrows the search (beyond the page position).
    var isFiltered: Bool {
        status != nil || attemptReason != nil || since != nil || until != nil || boundingBox != nil || near != nil || readsByBand
    }

    /// True when the search is read band by band from its text's or its flag's indexes.
    var readsByBand: Bool {
        text != nil || flag != nil
    }

    /// Page size (1...500).
    public var limit: Int
    /// Continue after this `seq` (from the previous page's cursor).
    public var afterSeq: Int64?

    /// Creates a search.
    public init(status: DeliveryStatus? = nil, since: Date? = nil, until: Date? = nil, boundingBox: BoundingBox? = nil,
                near: Circle? = nil, text: DeliveryTextQuery? = nil, flag: ProofFlag? = nil, limit: Int = 50,
                afterSeq: Int64? = nil, attemptReason: AttemptReason? = nil) {
        self.status = status
        self.since = since
        self.until = until
        self.boundingBox = boundingBox
        self.near = near
        self.text = text
        self.flag = flag
        self.limit = limit
        self.afterSeq = afterSeq
        self.attemptReason = attemptReason
    }
}
