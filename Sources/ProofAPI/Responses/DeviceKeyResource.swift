import Cryptography
import Foundation
import HTTPTypes
import ProofService
import ProofStore

/// A device key as the API shows it: the public key in base64 (as registered), its status and who
/// moved it there when.
struct DeviceKeyResource: Encodable {
    var id: String
    var publicKey: String
    /// `ed25519:` and the first 16 hex digits of the public key's SHA-256 (as checkpoints name keys).
    var fingerprint: String
    var label: String
    var status: String
    var registeredBy: String
    var registeredAt: String
    var approvedBy: String?
    var approvedAt: String?
    var revokedBy: String?
    var revokedAt: String?

    enum CodingKeys: String, CodingKey {
        case id, fingerprint, label, status
        case publicKey = "public_key", registeredBy = "registered_by", registeredAt = "registered_at"
        case approvedBy = "approved_by", approvedAt = "approved_at", revokedBy = "revoked_by", revokedAt = "revoked_at"
    }

    init(_ key: DeviceKey) {
        id = key.id.uuidString.lowercased()
        publicKey = Data(key.publicKey).base64EncodedString()
        fingerprint = Ed25519PublicKey.keyID(rawRepresentation: key.publicKey)
        label = key.label
        status = key.status.rawValue
        registeredBy = key.registeredBy.uuidString.lowercased()
        registeredAt = RFC3339Timestamp.format(key.registeredAt)
        approvedBy = key.approvedBy?.uuidString.lowercased()
        approvedAt = key.approvedAt.map(RFC3339Timestamp.format)
        revokedBy = key.revokedBy?.uuidString.lowercased()
        revokedAt = key.revokedAt.map(RFC3339Timestamp.format)
    }

    static func path(_ id: UUID) -> String { "/v1/devices/\(id.uuidString.lowercased())" }
}

extension HTTPField.Name {
    /// The id of the device key that signed an upload (docs/api.md, "Device signatures").
    public static let deviceKey = HTTPField.Name("Countersign-Device-Key")!
    /// The device's Ed25519 signature of the upload, base64.
    public static let deviceSignature = HTTPField.Name("Countersign-Device-Signature")!
}
