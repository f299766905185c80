/// Why sealed personal data could not be sealed or opened. Descriptions name files and key ids,
/// never key material.
public enum SealingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No data key file is configured (and generation is not allowed): one line naming the options.
    case notConfigured
    /// The data key file cannot be read or is not in the expected form.
    case invalidKeyFile(path: String, reason: String)
    /// A wrapped data key names a key-encryption key the key file does not hold (a rotated-out
    /// key removed too early, or another deployment's database).
    case unknownKey(String)
    /// The key-encryption key `keyID` of the file does not open the data key of delivery
    /// `reference`: the file holds another key under that id (another deployment's, or a
    /// regenerated development file), or the wrapped key was altered — the two look alike.
    case wrongKey(keyID: String, reference: String)
    /// A sealed value does not open with its delivery's data key: altered, or moved to another
    /// row or column.
    case unreadable(String)
    /// libcrypto failed while sealing.
    case sealingFailed(String)
    /// The proof's delivery was erased (migration 0026): its bytes and their key are gone for good.
    case erased(reference: String)

    public var description: String {
        switch self {
        case .notConfigured:
            "data keys: none configured: set DATA_KEY_FILE to a file of key-encryption keys (docs/data-protection.md, "
                + "\"Keys\"), or, for development only, DATA_KEY_GENERATE=true to generate one in DATA_DIR"
        case .invalidKeyFile(let path, let reason): "data key file \(path): \(reason)"
        case .unknownKey(let id): "data keys: key \(id) is not in the data key file (it wrapped data that is stored)"
        case .wrongKey(let id, let reference):
            "data keys: key \(id) of the data key file does not open the data key of delivery \(reference) "
                + "(another file's key under that id, or the wrapped key was altered)"
        case .unreadable(let what): "sealed data does not open: \(what)"
        case .sealingFailed(let message): "sealing failed: \(message)"
        case .erased(let reference): "delivery \(reference) was erased: its proof's body, ink and image are gone"
        }
    }
}
