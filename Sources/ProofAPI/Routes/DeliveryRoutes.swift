import Foundation
import HTTPTypes
import Hummingbird
import Postgres
import ProofService
import ProofStore

/// `POST /v1/deliveries`, `GET /v1/deliveries/{reference}` (with its attempts) and `GET /v1/deliveries` (search).
struct DeliveryRoutes: Sendable {
    let deliveries: DeliveryRepository
    /// Searches (`GET /v1/deliveries`) read here: the read replica when one is configured.
    let searches: DeliveryRepository
    let registration: DeliveryRegistration
    let policy: APIPolicy

    init(services: CountersignServices) {
        self.deliveries = services.deliveries
        self.searches = services.searches
        self.registration = services.registration
        self.policy = services.policy
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries") { request, context in try await create(request, context) }
        group.get("deliveries") { request, context in try await list(request, context) }
        group.get("deliveries/:reference") { _, context in try await show(context) }
    }

    func create(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.createDelivery)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: 64 * 1024)
        switch try await registration.register(body, by: actor, origin: context.auditOrigin(request)) {
        case .created(let delivery):
            return try JSONResponse.make(.created, DeliveryResource(delivery: delivery),
                                         headers: [.location: DeliveryResource.path(delivery.reference)])
        case .existing(let delivery), .conflict(let delivery):
            return try JSONResponse.make(.ok, DeliveryResource(delivery: delivery),
                                         headers: [.location: DeliveryResource.path(delivery.reference)])
        }
    }

    func show(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readDelivery)
        let reference = try context.deliveryReference()
        guard let delivery = try await deliveries.findWithAttempts(reference: reference) else {
            throw ServiceError.deliveryNotFound(reference)
        }
        return try JSONResponse.make(.ok, DeliveryResource(delivery: delivery, includeAttempts: true))
    }

    func list(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readDelivery)
        var query = PagedListQuery(request.uri.queryParameters, defaultLimit: policy.defaultPageSize, maxLimit: policy.maxPageSize)
        var search = DeliverySearch(limit: policy.defaultPageSize)
        DeliverySearchParameters.read(&query, into: &search)
        query.readPage()
        guard query.errors.isEmpty else { throw Problem.validation("The search parameters are not valid.", errors: query.errors) }
        (search.since, search.until, search.limit, search.afterSeq) = (query.since, query.until, query.limit, query.afterSeq)
        let page = try await searches.search(search)
        let (cursor, next) = query.nextPage(path: "/v1/deliveries", after: page.nextSeq)
        return try JSONResponse.make(.ok, ListPage(items: page.deliveries.map { DeliveryResource(delivery: $0) }, nextCursor: cursor, next: next))
    }
}
