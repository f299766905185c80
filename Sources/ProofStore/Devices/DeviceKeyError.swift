import Foundation

/// Why a device key could not be registered or changed.
public enum DeviceKeyError: Error, Sendable, Equatable {
    /// Another registration already holds this public key (one key, one device).
    case publicKeyTaken
    /// No device key has this id.
    case notFound(UUID)
    /// The key is revoked: it can be neither approved nor used again.
    case revoked(UUID)
    /// The database found no live dispatcher or admin key for the caller's credential (migration 0023).
    case actorRefused
}
