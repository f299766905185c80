import Cryptography
import Hummingbird
import ProofService

extension CheckpointKeyProvider {
    /// The key for a route that signs: a key that cannot be loaded is logged and answered 503
    /// `checkpoint_key_unavailable` (the file and reason stay in the log, not in the response).
    func key(for context: AppRequestContext) throws -> Ed25519PrivateKey {
        do {
            return try key()
        } catch {
            context.logger.error("checkpoint key unavailable", metadata: ["error": "\(error)"])
            throw Problem(.serviceUnavailable, code: "checkpoint_key_unavailable", detail: "The checkpoint signing key is not available.")
        }
    }
}
