import Foundation
import HTTPTypes
import Hummingbird
import ProofService
import ProofStore

/// `/v1/devices…`: a courier registers its device's public key; an admin or dispatcher approves or
/// revokes it; keys are listed and read (a courier sees its own). The work is
/// ``DeviceKeyAdministration``'s; every change is audited.
struct DeviceRoutes: Sendable {
    let devices: DeviceKeyAdministration

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("devices") { request, context in try await create(request, context) }
        group.get("devices") { request, context in try await list(request, context) }
        group.get("devices/:id") { _, context in try await show(context) }
        group.post("devices/:id/approve") { request, context in try await approve(request, context) }
        group.post("devices/:id/revoke") { request, context in try await revoke(request, context) }
    }

    func create(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.registerDevice)
        _ = try RequestBodyReader.requireJSON(request)
        let body = try await RequestBodyReader.collect(request, limit: 4 * 1024)
        let (key, created) = try await devices.register(body, actor: actor, origin: context.auditOrigin(request))
        return try JSONResponse.make(created ? .created : .ok, DeviceKeyResource(key), headers: [.location: DeviceKeyResource.path(key.id)])
    }

    func list(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.readDevice)
        let parameters = request.uri.queryParameters
        var errors: [Problem.FieldError] = []
        var limit = 100
        if let raw = parameters[Substring("limit")] {
            if let value = Int(String(raw)), (1...500).contains(value) { limit = value } else {
                errors.append(.init(field: "limit", message: "1 to 500", code: "invalid_limit"))
            }
        }
        var status: DeviceKey.Status?
        if let raw = parameters[Substring("status")] {
            status = DeviceKey.Status(rawValue: String(raw))
            if status == nil { errors.append(.init(field: "status", message: "registered, approved or revoked", code: "invalid_status")) }
        }
        guard errors.isEmpty else { throw Problem.validation("The parameters are not valid.", errors: errors) }
        let keys = try await devices.list(actor: actor, status: status, limit: limit)
        return try JSONResponse.make(.ok, ListPage(items: keys.map(DeviceKeyResource.init), nextCursor: nil, next: nil))
    }

    func show(_ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.readDevice)
        return try JSONResponse.make(.ok, DeviceKeyResource(try await devices.find(try id(context), actor: actor)))
    }

    func approve(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.approveDevice)
        return try JSONResponse.make(.ok, DeviceKeyResource(try await devices.approve(try id(context), origin: context.auditOrigin(request))))
    }

    func revoke(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.approveDevice)
        return try JSONResponse.make(.ok, DeviceKeyResource(try await devices.revoke(try id(context), origin: context.auditOrigin(request))))
    }

    /// The key id in the path; anything but a UUID names no key (404).
    func id(_ context: AppRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw Problem(.notFound, code: "device_key_not_found", detail: "A device key id is a UUID.")
        }
        return id
    }
}
