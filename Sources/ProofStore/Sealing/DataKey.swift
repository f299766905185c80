import Cryptography
import Foundation

/// One delivery's data key: 32 random bytes that seal its personal fields with AES-256-GCM. It is
/// stored only wrapped by a key-encryption key (``DataKeyring``) in `delivery_data_keys`; erasing
/// a delivery's personal data destroys that row, and with it every box the key sealed.
public struct DataKey: Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    /// A fresh random key.
    public static func random() throws(SealingError) -> DataKey {
        do {
            return DataKey(bytes: try AESGCM.randomBytes(AESGCM.keyByteCount))
        } catch {
            throw .sealingFailed(error.description)
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Never the key itself, wherever a key ends up printed.
    public var description: String { "DataKey(redacted)" }

    /// `plaintext` sealed as `field` of proof `proofID`: `nonce (12) ‖ ciphertext ‖ tag (16)`.
    public func seal(_ plaintext: [UInt8], _ field: SealedField, proof proofID: UUID) throws(SealingError) -> [UInt8] {
        do {
            return try AESGCM.seal(plaintext, key: bytes, associatedData: Self.binding(field, proofID))
        } catch {
            throw .sealingFailed(error.description)
        }
    }

    /// The plaintext of a box ``seal(_:_:proof:)`` made for the same field and proof.
    public func open(_ box: [UInt8], _ field: SealedField, proof proofID: UUID) throws(SealingError) -> [UInt8] {
        do {
            return try AESGCM.open(box, key: bytes, associatedData: Self.binding(field, proofID))
        } catch {
            throw .unreadable("\(field.rawValue) of proof \(proofID.uuidString.lowercased()): \(error.description)")
        }
    }

    /// `countersign-proof/v1:<proof id, lowercase>:<field>` (docs/audit.md, "Sealed proofs").
    static func binding(_ field: SealedField, _ proofID: UUID) -> [UInt8] {
        Array("countersign-proof/v1:\(proofID.uuidString.lowercased()):\(field.rawValue)".utf8)
    }
}
