/// What a ``ProofBatcher`` has done: transactions run, proofs stored alone and together, the
/// largest batch, and proofs stored again alone after their batch was refused.
public struct ProofBatchCounts: Sendable, Equatable {
    public var transactions = 0
    public var alone = 0
    public var together = 0
    public var largest = 0
    public var retried = 0
}
