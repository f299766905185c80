import Foundation

/// Why a proof was not stored.
public enum ProofStoreError: Error, Sendable, Equatable {
    /// No delivery has the reference.
    case deliveryNotFound
    /// The delivery already has a proof.
    case proofAlreadyRecorded(UUID)
    /// The delivery is `failed` or `cancelled`: it takes no proof any more.
    case deliveryClosed(DeliveryStatus)
    /// The upload's device key stopped being an approved key of its uploader before the proof was stored.
    case deviceKeyNotUsable
}
