import Foundation
import ProofStore

/// The filters of `GET /v1/deliveries` (and `since`/`until`, in their error order) read from the
/// query string into a ``DeliverySearch``; each invalid one adds a field error (answered as 422
/// with `errors[].field`), none throws.
///
/// A new filter is one more read here and one more condition in `DeliverySearchConditions`;
/// the accepted values of `status` and `flag` come from their enums, so a new case is accepted and
/// named in the error message without changes here.
enum DeliverySearchParameters {
    static func read(_ query: inout PagedListQuery, into search: inout DeliverySearch) {
        if let status = query.value("status") {
            if let parsed = DeliveryStatus(rawValue: status) { search.status = parsed } else {
                query.errors.append(.init(field: "status", message: "one of " + names(DeliveryStatus.allCases.map(\.rawValue)),
                                          code: "invalid_value"))
            }
        }
        if let reason = query.value("reason") {
            if let parsed = AttemptReason(rawValue: reason) { search.attemptReason = parsed } else {
                query.errors.append(.init(field: "reason", message: "one of " + names(AttemptReason.allCases.map(\.rawValue)),
                                          code: "invalid_value"))
            }
        }
        query.readPeriod()
        if let raw = query.value("bbox") {
            let parts = numbers(raw)
            if parts.count == 4, let west = parts[0], let south = parts[1], let east = parts[2], let north = parts[3],
               (-180...180).contains(west), (-180...180).contains(east), (-90...90).contains(south), (-90...90).contains(north),
               south <= north {
                search.boundingBox = .init(west: west, south: south, east: east, north: north)
            } else {
                query.errors.append(.init(field: "bbox", message: "west,south,east,north in degrees (west > east crosses the 180th meridian; south <= north)",
                                          code: "invalid_bbox"))
            }
        }
        if let raw = query.value("near") {
            let parts = numbers(raw)
            if parts.count == 3, let lat = parts[0], let lon = parts[1], let radius = parts[2],
               (-90...90).contains(lat), lon.isFinite, (-540...540).contains(lon), radius > 0, radius <= 20_100_000 {
                search.near = .init(center: GeoPoint(lat: lat, lon: lon), radiusMeters: radius)
            } else {
                query.errors.append(.init(field: "near", message: "lat,lon,radius_m (radius in metres, positive)", code: "invalid_near"))
            }
        }
        if let raw = query.value("q") {
            if let text = DeliveryTextQuery(raw) { search.text = text } else {
                query.errors.append(.init(field: "q", message: "\(DeliveryTextQuery.minimumLength) to \(DeliveryTextQuery.maximumLength) characters, no control characters",
                                          code: "invalid_query_text"))
            }
        }
        if let raw = query.value("flag") {
            if let flag = ProofFlag(rawValue: raw) { search.flag = flag } else {
                query.errors.append(.init(field: "flag", message: "one of " + names(ProofFlag.allCases.map(\.rawValue)),
                                          code: "invalid_value"))
            }
        }
    }

    private static func numbers(_ raw: String) -> [Double?] {
        raw.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func names(_ values: [String]) -> String {
        values.joined(separator: ", ")
    }
}
