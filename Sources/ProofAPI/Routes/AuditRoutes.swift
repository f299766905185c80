import Foundation
import Hummingbird
import Postgres
import ProofService
import ProofStore

/// `GET /v1/audit/events` (filtered, keyset-paged by seq), `GET /v1/audit/verify`, `GET /v1/audit/checkpoint` and
/// `GET /v1/audit/checkpoints` (keyset-paged by id, with witness status); auditor and admin only.
struct AuditRoutes: Sendable {
    let services: CountersignServices
    var policy: APIPolicy { services.policy }

    init(services: CountersignServices) {
        self.services = services
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.get("audit/events") { request, context in try await events(request, context) }
        group.get("audit/verify") { _, context in try await verify(context) }
        group.get("audit/checkpoint") { _, context in try await checkpoint(context) }
        group.get("audit/checkpoints") { request, context in try await checkpoints(request, context) }
        ExportRoutes(services: services).register(on: group)
    }

    func events(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        var query = PagedListQuery(request.uri.queryParameters, defaultLimit: policy.defaultPageSize, maxLimit: policy.maxPageSize)
        var search = AuditQuery(limit: policy.defaultPageSize)
        query.readPeriod()
        if let raw = query.value("actor") {
            if let id = UUID(uuidString: raw) { search.actorKeyID = id } else {
                query.errors.append(.init(field: "actor", message: "an API key id (UUID)", code: "invalid_actor"))
            }
        }
        if let raw = query.value("action") {
            if AuditAction(rawValue: raw) != nil { search.action = raw } else {
                query.errors.append(.init(field: "action", message: "one of " + AuditAction.allCases.map(\.rawValue).joined(separator: ", "),
                                          code: "invalid_action"))
            }
        }
        if let raw = query.value("subject") {
            if (1...200).contains(raw.utf8.count), raw.unicodeScalars.allSatisfy(TextRules.isAllowed) { search.subject = raw } else {
                query.errors.append(.init(field: "subject", message: "1 to 200 bytes, no control characters", code: "invalid_subject"))
            }
        }
        query.readPage()
        guard query.errors.isEmpty else { throw Problem.validation("The audit query parameters are not valid.", errors: query.errors) }
        (search.since, search.until, search.limit, search.afterSeq) = (query.since, query.until, query.limit, query.afterSeq)
        let page = try await services.auditReads.events(search)
        let (cursor, next) = query.nextPage(path: "/v1/audit/events", after: page.nextSeq)
        return try JSONResponse.make(.ok, ListPage(items: page.events.map { AuditEventResource(event: $0) }, nextCursor: cursor, next: next))
    }

    /// The current head, signed (a stored checkpoint is reused while the head has not moved).
    func checkpoint(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        let key = try services.checkpointKeys.key(for: context)
        let checkpoint = try await services.checkpoints(signingWith: key).current()
        return try JSONResponse.make(.ok, CheckpointResource(checkpoint))
    }

    /// Stored checkpoints, oldest first, each with what its witnesses answered.
    func checkpoints(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        var query = PagedListQuery(request.uri.queryParameters, defaultLimit: policy.defaultPageSize, maxLimit: policy.maxPageSize)
        query.readPage()
        guard query.errors.isEmpty else { throw Problem.validation("The checkpoint query parameters are not valid.", errors: query.errors) }
        let page = try await services.witnessReceipts.page(afterID: query.afterSeq ?? 0, limit: query.limit)
        let (cursor, next) = query.nextPage(path: "/v1/audit/checkpoints", after: page.nextID)
        return try JSONResponse.make(.ok, ListPage(items: page.items.map(WitnessedCheckpointResource.init), nextCursor: cursor, next: next))
    }

    /// Sealed proofs whose keys the service cannot use stop the walk: 503 `data_key_unavailable`
    /// (``ProofService/ServiceError/sealing(_:)``), never a report of proofs it could not check.
    func verify(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        let result: AuditVerification
        do {
            result = try await services.auditVerifier.verify()
        } catch let error as SealingError {
            throw ServiceError.sealing(error)
        }
        return try JSONResponse.make(.ok, AuditVerificationResource(CountersignMetrics.observe(result)))
    }
}
