/// What an `Idempotency-Key` lookup found.
public enum IdempotencyClaim: Sendable, Equatable {
    /// The key is new (or its earlier attempt was abandoned): this request owns it now.
    case claimed
    /// The same key with the same request already completed: replay this response.
    case replay(IdempotentResponse)
    /// The same key is being processed by another request right now.
    case inFlight
    /// The same key was used with a different request.
    case mismatch
}
