import Foundation
import HTTPTypes
import Hummingbird
import Postgres
import ProofService
import ProofStore

/// `POST /v1/deliveries`, `GET /v1/deliveries/{reference}` and `GET /v1/deliveries` (search).
struct DeliveryRoutes: Sendable {
    let deliveries: DeliveryRepository
    /// Searches (`GET /v1/deliveries`) read here: the read replica when one is configured.
    let searches: DeliveryRepository
    let policy: APIPolicy

    init(deliveries: DeliveryRepository, searches: DeliveryRepository? = nil, policy: APIPolicy) {
        self.deliveries = deliveries
        self.searches = searches ?? deliveries
        self.policy = policy
    }

    /// The body of `POST /v1/deliveries`.
    struct CreateRequest: Decodable {
        struct Recipient: Decodable { var name: String? }
        struct Destination: Decodable {
            var lat: Double?
            var lon: Double?
        }
        var reference: String?
        var recipient: Recipient?
        var address: String?
        var destination: Destination?
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries") { request, context in try await create(request, context) }
        group.get("deliveries") { request, context in try await list(request, context) }
        group.get("deliveries/:reference") { _, context in try await show(context) }
    }

    /// A reference is 1 to 64 characters of letters, digits and `._:-`, starting with a letter or digit.
    static func isValidReference(_ reference: String) -> Bool {
        let bytes = Array(reference.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first, isAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x3A || $0 == 0x2D }
    }

    static func isAlphanumeric(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
    }

    /// The `{reference}` path parameter; 404 when it cannot name a delivery.
    static func reference(_ context: AppRequestContext) throws -> String {
        let reference = context.parameters.get("reference") ?? ""
        guard isValidReference(reference) else {
            throw Problem(.notFound, code: "delivery_not_found", detail: "No delivery has this reference.")
        }
        return reference
    }

    func create(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.createDelivery)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: 64 * 1024)
        let input = try RequestBodyReader.decode(CreateRequest.self, from: body)
        let draft = try Self.validate(input)
        switch try await deliveries.create(draft, by: actor, origin: context.auditOrigin(request)) {
        case .created(let delivery):
            return try JSONResponse.make(.created, DeliveryResource(delivery: delivery),
                                         headers: [.location: DeliveryResource.path(delivery.reference)])
        case .existing(let delivery):
            return try JSONResponse.make(.ok, DeliveryResource(delivery: delivery),
                                         headers: [.location: DeliveryResource.path(delivery.reference)])
        case .conflict(let delivery):
            throw Problem(.conflict, code: "reference_conflict",
                          detail: "Delivery \(delivery.reference) already exists with different content.",
                          errors: [.init(field: "/reference", message: "already used by another delivery", code: "reference_conflict")])
        }
    }

    static func validate(_ input: CreateRequest) throws -> NewDelivery {
        var errors: [Problem.FieldError] = []
        let reference = input.reference ?? ""
        if input.reference == nil {
            errors.append(.init(field: "/reference", message: "required", code: "missing_field"))
        } else if !isValidReference(reference) {
            errors.append(.init(field: "/reference", message: "1 to 64 characters: letters, digits and . _ : - (starting with a letter or digit)",
                                code: "invalid_reference"))
        }
        let name = input.recipient?.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if input.recipient?.name == nil {
            errors.append(.init(field: "/recipient/name", message: "required", code: "missing_field"))
        } else if !(1...200).contains(name.count) {
            errors.append(.init(field: "/recipient/name", message: "1 to 200 characters", code: "invalid_length"))
        }
        let address = input.address?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if input.address == nil {
            errors.append(.init(field: "/address", message: "required", code: "missing_field"))
        } else if !(1...500).contains(address.count) {
            errors.append(.init(field: "/address", message: "1 to 500 characters", code: "invalid_length"))
        }
        var destination: GeoPoint?
        if let given = input.destination {
            errors += validateCoordinates(lat: given.lat, lon: given.lon, at: "/destination")
            if let lat = given.lat, let lon = given.lon, errors.isEmpty { destination = GeoPoint(lat: lat, lon: lon) }
        }
        guard errors.isEmpty else { throw Problem.validation("The delivery is not valid.", errors: errors) }
        return NewDelivery(reference: reference, recipientName: name, address: address, destination: destination)
    }

    /// Latitude in -90...90 and a finite longitude (normalised later) are required together.
    static func validateCoordinates(lat: Double?, lon: Double?, at path: String) -> [Problem.FieldError] {
        var errors: [Problem.FieldError] = []
        if let lat {
            if !(lat.isFinite && (-90...90).contains(lat)) {
                errors.append(.init(field: path + "/lat", message: "a latitude in -90...90", code: "out_of_range"))
            }
        } else {
            errors.append(.init(field: path + "/lat", message: "required", code: "missing_field"))
        }
        if let lon {
            if !(lon.isFinite && (-540...540).contains(lon)) {
                errors.append(.init(field: path + "/lon", message: "a longitude in -180...180", code: "out_of_range"))
            }
        } else {
            errors.append(.init(field: path + "/lon", message: "required", code: "missing_field"))
        }
        return errors
    }

    func show(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readDelivery)
        let reference = try Self.reference(context)
        guard let delivery = try await deliveries.find(reference: reference) else {
            throw Problem(.notFound, code: "delivery_not_found", detail: "No delivery has the reference \(reference).")
        }
        return try JSONResponse.make(.ok, DeliveryResource(delivery: delivery))
    }

    func list(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readDelivery)
        var query = PagedListQuery(request.uri.queryParameters, defaultLimit: policy.defaultPageSize, maxLimit: policy.maxPageSize)
        var search = DeliverySearch(limit: policy.defaultPageSize)
        if let status = query.value("status") {
            if let parsed = DeliveryStatus(rawValue: status) { search.status = parsed } else {
                query.errors.append(.init(field: "status", message: "pending or delivered", code: "invalid_value"))
            }
        }
        query.readPeriod()
        if let raw = query.value("bbox") {
            let parts = raw.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
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
            let parts = raw.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            if parts.count == 3, let lat = parts[0], let lon = parts[1], let radius = parts[2],
               (-90...90).contains(lat), lon.isFinite, (-540...540).contains(lon), radius > 0, radius <= 20_100_000 {
                search.near = .init(center: GeoPoint(lat: lat, lon: lon), radiusMeters: radius)
            } else {
                query.errors.append(.init(field: "near", message: "lat,lon,radius_m (radius in metres, positive)", code: "invalid_near"))
            }
        }
        query.readPage()
        guard query.errors.isEmpty else { throw Problem.validation("The search parameters are not valid.", errors: query.errors) }
        (search.since, search.until, search.limit, search.afterSeq) = (query.since, query.until, query.limit, query.afterSeq)
        let page = try await searches.search(search)
        let (cursor, next) = query.nextPage(path: "/v1/deliveries", after: page.nextSeq)
        return try JSONResponse.make(.ok, ListPage(items: page.deliveries.map { DeliveryResource(delivery: $0) }, nextCursor: cursor, next: next))
    }
}
