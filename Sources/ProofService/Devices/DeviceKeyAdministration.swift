import Cryptography
import Foundation
import ProofStore

/// The device key use cases (docs/courier-guide.md §7): a courier registers its device's public
/// key, an admin or dispatcher approves or revokes it, and keys are listed and read — a courier
/// sees only the keys it registered. Every change is audited by the repository, in its
/// transaction. Knows no HTTP type: refusals are ``ServiceError``s.
public struct DeviceKeyAdministration: Sendable {
    let keys: DeviceKeyRepository

    /// Creates the use cases over `keys`.
    public init(keys: DeviceKeyRepository) {
        self.keys = keys
    }

    struct RegisterBody: Decodable {
        var public_key: String?
        var label: String?
    }

    /// `POST /v1/devices`: registers the public key in `body` (`public_key`: the 32 raw bytes in
    /// base64, `label`: 1 to 200 characters) for `actor`, as `registered`. The same public key sent
    /// again by the same API key (a retry whose answer was lost) gives the existing key with
    /// `created` false; by another key it is 409 `device_key_exists`.
    public func register(_ body: [UInt8], actor: Actor, origin: AuditOrigin) async throws -> (key: DeviceKey, created: Bool) {
        let input = try JSONEnvelopeDecoder.decode(RegisterBody.self, from: body)
        var errors: [FieldError] = []
        var publicKey: [UInt8] = []
        if let text = input.public_key {
            if let bytes = Data(base64Encoded: text).map(Array.init), bytes.count == 32 {
                // Refuses a non-canonical encoding, a point off the curve and the 8 of small order, under
                // which a constant signature would verify for every upload (docs/api.md, "Device keys").
                do {
                    publicKey = try Ed25519PublicKey(rawRepresentation: bytes).rawRepresentation
                } catch {
                    errors.append(.init(field: "/public_key", message: "not a usable Ed25519 public key: \(error.message)",
                                        code: "invalid_public_key"))
                }
            } else {
                errors.append(.init(field: "/public_key", message: "the 32 raw Ed25519 public key bytes in base64", code: "invalid_public_key"))
            }
        } else {
            errors.append(.init(field: "/public_key", message: "required", code: "missing_field"))
        }
        let label = (input.label ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if input.label == nil {
            errors.append(.init(field: "/label", message: "required", code: "missing_field"))
        } else {
            // The text rules every other free-text field follows (code points, as the database's
            // length() counts: graphemes here let "e" + 1,900 combining marks reach its CHECK as a 500),
            // under this field's own code.
            errors += TextRules.check(label, sent: input.label, at: "/label", lengths: 1...200).map {
                FieldError(field: $0.field, message: $0.message, code: "invalid_label")
            }
        }
        guard errors.isEmpty else { throw ServiceError.validation("The device key is not valid.", errors: errors) }
        do {
            return (try await keys.register(publicKey: publicKey, label: label, owner: actor.keyID, origin: origin), true)
        } catch DeviceKeyError.publicKeyTaken {
            if let existing = try await keys.find(publicKey: publicKey), existing.registeredBy == actor.keyID { return (existing, false) }
            throw ServiceError(.conflict, code: "device_key_exists",
                               detail: "This public key is already registered; a device makes a new key pair for a new registration.")
        }
    }

    /// Approves key `id` (`POST /v1/devices/{id}/approve`); a revoked key is 409 `device_key_revoked`.
    public func approve(_ id: UUID, origin: AuditOrigin) async throws -> DeviceKey {
        do {
            return try await keys.approve(id, origin: origin)
        } catch DeviceKeyError.notFound {
            throw Self.notFound(id)
        } catch DeviceKeyError.revoked {
            throw ServiceError(.conflict, code: "device_key_revoked", detail: "Device key \(id.uuidString.lowercased()) is revoked: it cannot be approved again.")
        } catch DeviceKeyError.actorRefused {
            throw Self.actorRefused
        }
    }

    /// Revokes key `id` for good (`POST /v1/devices/{id}/revoke`).
    public func revoke(_ id: UUID, origin: AuditOrigin) async throws -> DeviceKey {
        do {
            return try await keys.revoke(id, origin: origin)
        } catch DeviceKeyError.notFound {
            throw Self.notFound(id)
        } catch DeviceKeyError.actorRefused {
            throw Self.actorRefused
        }
    }

    /// Key `id` as `actor` may see it: a courier only its own (another's is 404, as if absent).
    public func find(_ id: UUID, actor: Actor) async throws -> DeviceKey {
        guard let key = try await keys.find(id), actor.role != .courier || key.registeredBy == actor.keyID else { throw Self.notFound(id) }
        return key
    }

    /// The keys `actor` may see, newest first: a courier its own, everyone else all of them.
    public func list(actor: Actor, status: DeviceKey.Status?, limit: Int) async throws -> [DeviceKey] {
        try await keys.list(registeredBy: actor.role == .courier ? actor.keyID : nil, status: status, limit: limit)
    }

    /// The database found no live dispatcher or admin key for the request's token (revoked since
    /// the request was authenticated): the key may not change device keys.
    static let actorRefused = ServiceError(.forbidden, code: "forbidden", detail: "This API key may not approve or revoke device keys any more.")

    static func notFound(_ id: UUID) -> ServiceError {
        ServiceError(.notFound, code: "device_key_not_found", detail: "No device key has the id \(id.uuidString.lowercased()).")
    }
}
