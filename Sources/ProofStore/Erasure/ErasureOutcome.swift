import Foundation

/// What asking to erase a delivery did (``ErasureRepository/erase(reference:credential:in:)``).
public enum ErasureOutcome: Sendable, Equatable {
    /// Erased by this call, at `at`, as the key `by`.
    case erasedNow(deliveryID: UUID, at: Date, by: UUID)
    /// Erased before, at `at`, by `by` (`nil`: by the retention policy): nothing changed.
    case alreadyErased(deliveryID: UUID, at: Date, by: UUID?)
    /// Still pending: cancel it first (an erased delivery can never be completed). Nothing changed.
    case pending
    /// Under a legal hold: nothing changed.
    case held
}
