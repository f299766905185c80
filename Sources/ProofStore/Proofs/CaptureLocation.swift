/// Where the device was when the signature was captured.
public struct CaptureLocation: Sendable, Equatable {
    /// The position.
    public var point: GeoPoint
    /// Reported horizontal accuracy (metres), if any.
    public var accuracyMeters: Double?

    /// Creates a location.
    public init(point: GeoPoint, accuracyMeters: Double?) {
        self.point = point
        self.accuracyMeters = accuracyMeters
    }
}
