import ProofStore

extension ServiceError {
    /// A proof that could not be sealed or opened: 503 `data_key_unavailable` when the keys are
    /// missing (not configured, or a key id the file lacks: an operator's fix), 500
    /// `sealed_data_unreadable` when stored data does not open (altered, or another deployment's).
    /// The detail names a key id at most: never a file path or key material.
    public static func sealing(_ error: SealingError) -> ServiceError {
        switch error {
        case .unknownKey(let id):
            ServiceError(.unavailable, code: "data_key_unavailable",
                         detail: "The data key file lacks key \(id), which sealed this proof's data key.", retryAfterSeconds: 30)
        case .wrongKey(let id, _):
            ServiceError(.unavailable, code: "data_key_unavailable",
                         detail: "The data key file's key \(id) does not open this proof's data key.", retryAfterSeconds: 30)
        case .notConfigured, .invalidKeyFile:
            ServiceError(.unavailable, code: "data_key_unavailable", detail: "The service has no usable data keys (DATA_KEY_FILE).",
                         retryAfterSeconds: 30)
        case .unreadable:
            ServiceError(.internalError, code: "sealed_data_unreadable", detail: "The proof's sealed data does not open: it was altered.")
        case .sealingFailed:
            ServiceError(.internalError, code: "sealing_failed", detail: "The proof could not be sealed.")
        case .erased(let reference):
            ServiceError(.gone, code: "proof_erased",
                         detail: "Delivery \(reference) was erased: its signature's image and points no longer exist.")
        }
    }
}
