import Foundation
import Hummingbird
import ProofStore

/// `GET /v1/session`: who the presented API key is — its id, name, role and what the role may do —
/// so a client (the web console) can choose its views without guessing. Any valid key.
struct SessionRoutes: Sendable {
    struct Resource: Encodable {
        var keyID: String
        var name: String
        var role: String
        var permissions: [String]

        enum CodingKeys: String, CodingKey {
            case name, role, permissions
            case keyID = "key_id"
        }
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.get("session") { _, context in
            guard let actor = context.actor else { throw BearerAuthMiddleware.unauthorized("An API key is required.") }
            let permissions = Permission.allCases.filter { $0.roles.contains(actor.role) }.map(\.name)
            return try JSONResponse.make(.ok, Resource(keyID: actor.keyID.uuidString.lowercased(), name: actor.name,
                                                       role: actor.role.rawValue, permissions: permissions))
        }
    }
}
