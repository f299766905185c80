import Hummingbird
import ProofStore

/// What a route does, and which roles may do it.
public enum Permission: Sendable, CaseIterable {
    /// Create deliveries: dispatcher, admin.
    case createDelivery
    /// Read and list deliveries: every role.
    case readDelivery
    /// Upload a proof: courier, dispatcher, admin.
    case uploadProof
    /// Record a failed delivery attempt: courier, dispatcher, admin.
    case recordAttempt
    /// Cancel a delivery or give it up as failed: dispatcher, admin.
    case closeDelivery
    /// Read a stored proof's metadata, PNG and SVG: dispatcher, auditor, admin.
    case readProof
    /// Read a proof's raw dynamics (the original body, the ink as InkML): auditor, admin. The
    /// point stream is behavioural biometric data, the most sensitive thing we hold; a dispatcher
    /// finding a delivery needs the image, not the dynamics (docs/data-protection.md).
    case readPoints
    /// Read and verify the audit log: auditor, admin.
    case readAudit
    /// Export proofs in bulk: auditor, admin.
    case export
    /// Register, change and inspect webhooks: admin.
    case manageWebhooks
    /// Register a device key for one's own uploads: courier, dispatcher, admin (who upload).
    case registerDevice
    /// Approve or revoke a device key: dispatcher, admin.
    case approveDevice
    /// List and read device keys: every role (a courier sees only its own).
    case readDevice
    /// Erase a delivery's personal data: admin.
    case eraseDelivery
    /// Set, clear and read a delivery's legal hold: auditor, admin.
    case holdDelivery

    /// The permission's name in `GET /v1/session`.
    public var name: String {
        switch self {
        case .createDelivery: "create_delivery"
        case .readDelivery: "read_delivery"
        case .uploadProof: "upload_proof"
        case .recordAttempt: "record_attempt"
        case .closeDelivery: "close_delivery"
        case .readProof: "read_proof"
        case .readPoints: "read_points"
        case .readAudit: "read_audit"
        case .export: "export"
        case .manageWebhooks: "manage_webhooks"
        case .registerDevice: "register_device"
        case .approveDevice: "approve_device"
        case .readDevice: "read_device"
        case .eraseDelivery: "erase_delivery"
        case .holdDelivery: "hold_delivery"
        }
    }

    /// The roles granted this permission.
    public var roles: Set<Role> {
        switch self {
        case .createDelivery: return [.dispatcher, .admin]
        case .readDelivery: return [.courier, .dispatcher, .auditor, .admin]
        case .uploadProof, .recordAttempt: return [.courier, .dispatcher, .admin]
        case .closeDelivery: return [.dispatcher, .admin]
        case .readProof: return [.dispatcher, .auditor, .admin]
        case .readPoints, .readAudit, .export: return [.auditor, .admin]
        case .manageWebhooks: return [.admin]
        case .registerDevice: return [.courier, .dispatcher, .admin]
        case .approveDevice: return [.dispatcher, .admin]
        case .readDevice: return [.courier, .dispatcher, .auditor, .admin]
        case .eraseDelivery: return [.admin]
        case .holdDelivery: return [.auditor, .admin]
        }
    }
}

extension AppRequestContext {
    /// The authenticated actor when its role has `permission`; 401 without an actor, 403 otherwise.
    public func require(_ permission: Permission) throws -> Actor {
        guard let actor else {
            throw Problem(.unauthorized, code: "unauthorized", detail: "An API key is required: Authorization: Bearer <token>.",
                          headers: [.wwwAuthenticate: "Bearer"])
        }
        guard permission.roles.contains(actor.role) else {
            throw Problem(.forbidden, code: "forbidden",
                          detail: "The \(actor.role.rawValue) role may not do this; allowed: \(permission.roles.map(\.rawValue).sorted().joined(separator: ", ")).")
        }
        return actor
    }
}
