import Foundation

/// A WGS 84 position in degrees; longitudes are kept normalised to `[-180, 180)`.
public struct GeoPoint: Sendable, Equatable, Codable {
    /// Latitude in degrees, `-90...90`.
    public var lat: Double
    /// Longitude in degrees, normalised to `[-180, 180)`.
    public var lon: Double

    /// Creates a point, normalising `lon` into `[-180, 180)`.
    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = GeoPoint.normalizedLongitude(lon)
    }

    /// Mean Earth radius (IUGG), metres.
    public static let earthRadius = 6_371_008.8

    /// `lon` mapped into `[-180, 180)` (e.g. 190 → -170, 180 → -180).
    public static func normalizedLongitude(_ lon: Double) -> Double {
        guard lon.isFinite else { return lon }
        if lon >= -180 && lon < 180 { return lon }
        var value = (lon + 180).truncatingRemainder(dividingBy: 360)
        if value < 0 { value += 360 }
        let result = value - 180
        return result >= 180 ? -180 : result
    }

    /// Great-circle distance to `other` in metres (haversine).
    public func distance(to other: GeoPoint) -> Double {
        let phi1 = lat * .pi / 180, phi2 = other.lat * .pi / 180
        let dPhi = (other.lat - lat) * .pi / 180
        let dLambda = (other.lon - lon) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * GeoPoint.earthRadius * asin(min(1, sqrt(a)))
    }
}

extension GeoPoint {
    /// The point two nullable columns hold: `nil` unless both latitude and longitude are set.
    static func stored(lat: Double?, lon: Double?) -> GeoPoint? {
        guard let lat, let lon else { return nil }
        return GeoPoint(lat: lat, lon: lon)
    }
}
