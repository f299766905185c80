import Foundation

/// A courier device's Ed25519 public key, as registered (migration 0017): the key a device signs
/// its uploads with once an admin or dispatcher approved it.
public struct DeviceKey: Sendable, Equatable {
    /// Where a key is in its life: registered → approved → revoked (or registered → revoked).
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// Registered by a courier, not yet usable.
        case registered
        /// Approved: uploads signed with it are accepted.
        case approved
        /// Revoked for good: uploads signed with it are refused.
        case revoked
    }

    /// The key's id: what the `Countersign-Device-Key` header names.
    public var id: UUID
    /// The courier API key that registered it; only that key's uploads may use it.
    public var registeredBy: UUID
    /// The 32 raw Ed25519 public key bytes.
    public var publicKey: [UInt8]
    /// The courier's name for the device ("van 12 handheld").
    public var label: String
    public var status: Status
    public var registeredAt: Date
    public var approvedBy: UUID?
    public var approvedAt: Date?
    public var revokedBy: UUID?
    public var revokedAt: Date?

    /// Creates a key description.
    public init(id: UUID, registeredBy: UUID, publicKey: [UInt8], label: String, status: Status, registeredAt: Date,
                approvedBy: UUID? = nil, approvedAt: Date? = nil, revokedBy: UUID? = nil, revokedAt: Date? = nil) {
        self.id = id
        self.registeredBy = registeredBy
        self.publicKey = publicKey
        self.label = label
        self.status = status
        self.registeredAt = registeredAt
        self.approvedBy = approvedBy
        self.approvedAt = approvedAt
        self.revokedBy = revokedBy
        self.revokedAt = revokedAt
    }

    /// The audit subject of the key's events.
    public static func subject(_ id: UUID) -> String { "device_key:" + id.uuidString.lowercased() }
}
