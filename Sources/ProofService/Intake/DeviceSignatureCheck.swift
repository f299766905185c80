import Cryptography
import Foundation
import ProofStore

/// Decides, before anything of an upload is stored, whether its device signature stands
/// (docs/api.md, "Device signatures"): the claim must be well formed, name an approved, unrevoked
/// key registered by the uploading API key, and verify over ``DeviceUploadMessage``. The key is
/// looked up here (one query); the Ed25519 verification itself is CPU work, which
/// ``DeviceSignatureCheck/Signer/verify(reference:bodySHA256:)`` does on the caller's CPU pool job.
struct DeviceSignatureCheck: Sendable {
    let keys: DeviceKeyRepository
    let mode: DeviceKeyMode

    /// A key that may sign for this upload, with the signature to verify.
    struct Signer: Sendable {
        let keyID: UUID
        let publicKey: Ed25519PublicKey
        let signature: [UInt8]

        /// Verifies the signature over the upload of `bodySHA256` to `reference`; 403
        /// `device_signature_invalid` when it does not (another body, another delivery, another key).
        func verify(reference: String, bodySHA256: [UInt8]) throws(ServiceError) -> DeviceSignature {
            let message = DeviceUploadMessage.bytes(reference: reference, keyID: keyID, bodySHA256: bodySHA256)
            guard publicKey.isValidSignature(signature, for: message) else {
                throw ServiceError(.forbidden, code: "device_signature_invalid",
                                   detail: "The device signature does not verify over this body for delivery \(reference) with key \(keyID.uuidString.lowercased()).")
            }
            return DeviceSignature(keyID: keyID, signature: signature)
        }
    }

    /// The signer the upload's `claim` names for `actor`, or `nil` for an unsigned upload where
    /// that is allowed (and always with ``DeviceKeyMode/off``).
    func signer(for claim: DeviceSignatureClaim, actor: Actor) async throws -> Signer? {
        if mode == .off { return nil }
        if claim.isEmpty {
            guard mode == .required else { return nil }
            throw ServiceError(.forbidden, code: "device_signature_required",
                               detail: "This deployment requires every upload to be signed by an approved device key (Countersign-Device-Key and Countersign-Device-Signature).")
        }
        guard let keyText = claim.keyID, let signatureText = claim.signature else {
            throw Self.malformed("Both Countersign-Device-Key and Countersign-Device-Signature are needed, or neither.")
        }
        guard keyText.utf8.count == 36, let keyID = UUID(uuidString: keyText) else {
            throw Self.malformed("Countersign-Device-Key is a device key id (a UUID).")
        }
        guard signatureText.utf8.count == 88, let signature = Data(base64Encoded: signatureText).map(Array.init), signature.count == 64 else {
            throw Self.malformed("Countersign-Device-Signature is the 64-byte Ed25519 signature in base64 (88 characters).")
        }
        guard let key = try await keys.find(keyID) else {
            throw ServiceError(.forbidden, code: "device_key_unknown", detail: "No device key has the id \(keyText.lowercased()).")
        }
        guard key.registeredBy == actor.keyID else {
            throw ServiceError(.forbidden, code: "device_key_not_yours",
                               detail: "Device key \(keyText.lowercased()) was registered by another API key; a device signs only its own courier's uploads.")
        }
        switch key.status {
        case .registered:
            throw ServiceError(.forbidden, code: "device_key_not_approved",
                               detail: "Device key \(keyText.lowercased()) is not approved yet; an admin or dispatcher approves it.")
        case .revoked:
            throw ServiceError(.forbidden, code: "device_key_revoked", detail: "Device key \(keyText.lowercased()) is revoked.")
        case .approved:
            // A key stored before registration refused weak keys (a small-order point verifies a
            // constant signature for any body) signs nothing.
            do {
                return Signer(keyID: keyID, publicKey: try Ed25519PublicKey(rawRepresentation: key.publicKey), signature: signature)
            } catch {
                throw ServiceError(.forbidden, code: "device_signature_invalid",
                                   detail: "Device key \(keyText.lowercased()) is not a usable Ed25519 public key (\(error.message)): "
                                       + "no signature by it verifies; revoke it and register a new key.")
            }
        }
    }

    static func malformed(_ detail: String) -> ServiceError {
        ServiceError(.badRequest, code: "device_signature_malformed", detail: detail)
    }
}
