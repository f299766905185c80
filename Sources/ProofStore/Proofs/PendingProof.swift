import Foundation

/// A proof waiting to be stored: what ``ProofRepository/record(_:reference:idempotency:origin:)``
/// was given, as one value the ``ProofBatcher`` can queue.
struct PendingProof: Sendable {
    var proof: NewProof
    var reference: String
    /// The proof's body, ink and PNG sealed, and its delivery's wrapped data key.
    var sealed: ProofSealer.SealedProof
    var idempotency: (apiKeyID: UUID, key: String, response: IdempotentResponse)?
    var origin: AuditOrigin
}
