import Foundation
import Hummingbird
import Postgres
import ProofStore

/// `GET /v1/audit/events` (filtered, keyset-paged by seq) and `GET /v1/audit/verify`; auditor and admin only.
struct AuditRoutes: Sendable {
    let log: AuditLog
    let verifier: AuditVerifier
    let policy: APIPolicy

    init(database: PostgresClient, policy: APIPolicy) {
        self.log = AuditLog(database: database)
        self.verifier = AuditVerifier(database: database)
        self.policy = policy
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.get("audit/events") { request, context in try await events(request, context) }
        group.get("audit/verify") { _, context in try await verify(context) }
    }

    struct Page: Encodable {
        var items: [AuditEventResource]
        var nextCursor: String?
        var next: String?
        enum CodingKeys: String, CodingKey {
            case items, next
            case nextCursor = "next_cursor"
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(items, forKey: .items)
            try c.encode(nextCursor, forKey: .nextCursor)
            try c.encode(next, forKey: .next)
        }
    }

    func events(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        let query = request.uri.queryParameters
        var search = AuditQuery(limit: policy.defaultPageSize)
        var errors: [Problem.FieldError] = []
        for name in ["since", "until"] {
            guard let raw = query[Substring(name)].map(String.init) else { continue }
            do {
                let time = try RFC3339Timestamp(parsing: raw).date
                if name == "since" { search.since = time } else { search.until = time }
            } catch {
                errors.append(.init(field: name, message: "an RFC 3339 timestamp with offset", code: "invalid_timestamp"))
            }
        }
        if let raw = query["actor"].map(String.init) {
            if let id = UUID(uuidString: raw) { search.actorKeyID = id } else {
                errors.append(.init(field: "actor", message: "an API key id (UUID)", code: "invalid_actor"))
            }
        }
        if let raw = query["action"].map(String.init) {
            if AuditAction(rawValue: raw) != nil { search.action = raw } else {
                errors.append(.init(field: "action", message: "one of " + AuditAction.allCases.map(\.rawValue).joined(separator: ", "),
                                    code: "invalid_action"))
            }
        }
        if let raw = query["subject"].map(String.init) {
            if (1...200).contains(raw.utf8.count) { search.subject = raw } else {
                errors.append(.init(field: "subject", message: "1 to 200 characters", code: "invalid_subject"))
            }
        }
        if let raw = query["limit"].map(String.init) {
            if let limit = Int(raw), (1...policy.maxPageSize).contains(limit) { search.limit = limit } else {
                errors.append(.init(field: "limit", message: "an integer in 1...\(policy.maxPageSize)", code: "invalid_limit"))
            }
        }
        if let raw = query["cursor"].map(String.init) {
            if let seq = DeliveryRoutes.decodeCursor(raw) { search.afterSeq = seq } else {
                errors.append(.init(field: "cursor", message: "a next_cursor value from a previous page", code: "invalid_cursor"))
            }
        }
        guard errors.isEmpty else { throw Problem.validation("The audit query parameters are not valid.", errors: errors) }
        let page = try await log.events(search)
        let cursor = page.nextSeq.map(DeliveryRoutes.encodeCursor)
        var next: String?
        if let cursor {
            var items = query.filter { $0.key != "cursor" }.map { "\($0.key)=\(DeliveryRoutes.percentEncode(String($0.value)))" }
            items.append("cursor=\(cursor)")
            next = "/v1/audit/events?" + items.joined(separator: "&")
        }
        return try JSONResponse.make(.ok, Page(items: page.events.map { AuditEventResource(event: $0) }, nextCursor: cursor, next: next))
    }

    func verify(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readAudit)
        return try JSONResponse.make(.ok, AuditVerificationResource(try await verifier.verify()))
    }
}
