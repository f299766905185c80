/// When to try a request again, and after how long.
///
/// Retried: no answer at all (the request may or may not have arrived; the Idempotency-Key
/// makes a second arrival harmless), any 5xx, 429, and 409 `idempotency_key_in_flight` (an
/// earlier attempt is still being processed). Never retried: any other 4xx, because the same
/// bytes will get the same refusal. The wait is the server's `Retry-After` when it sends one
/// (capped at ``maxDelay``), else exponential backoff with full jitter: a random delay in
/// `0…min(maxDelay, baseDelay·2^attempt)`, so a fleet of vans coming back online at once does
/// not retry in lock-step.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included. Default 6.
    public var maxAttempts: Int
    /// The backoff ceiling for the first retry, in seconds. Default 0.5.
    public var baseDelay: Double
    /// The longest wait, backoff or `Retry-After`, in seconds. Default 60.
    public var maxDelay: Double

    public init(maxAttempts: Int = 6, baseDelay: Double = 0.5, maxDelay: Double = 60) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
    }

    /// What one attempt ended with.
    public enum Outcome: Sendable, Equatable {
        /// No answer (``CountersignClientError/transport(_:)``).
        case noAnswer
        /// An answer: its status, `Retry-After` in seconds if it had one, and its problem code if any.
        case answer(status: Int, retryAfter: Double?, code: String?)
    }

    /// The verdict for one outcome.
    public enum Decision: Sendable, Equatable {
        /// Done: a success, a definitive refusal, or no attempts left.
        case stop
        /// Wait this many seconds, then try again.
        case retry(after: Double)
    }

    /// Whether `outcome` is worth another attempt at all, attempts aside.
    public static func isRetryable(_ outcome: Outcome) -> Bool {
        switch outcome {
        case .noAnswer: return true
        case .answer(let status, _, let code):
            if status >= 500 || status == 429 { return true }
            return status == 409 && code == "idempotency_key_in_flight"
        }
    }

    /// The decision after attempt number `attempt` (1 for the first) ended with `outcome`.
    /// `random` gives a value in `0..<1` (injected so tests are deterministic).
    public func decide(after attempt: Int, _ outcome: Outcome,
                       random: () -> Double = { Double.random(in: 0..<1) }) -> Decision {
        guard attempt < maxAttempts, RetryPolicy.isRetryable(outcome) else { return .stop }
        if case .answer(_, let retryAfter?, _) = outcome {
            return .retry(after: min(max(0, retryAfter), maxDelay))
        }
        return .retry(after: backoffCeiling(after: attempt) * random())
    }

    /// The upper bound of the jittered wait after attempt `attempt`: `baseDelay·2^(attempt−1)`, at most ``maxDelay``.
    public func backoffCeiling(after attempt: Int) -> Double {
        let exponent = Double(min(max(0, attempt - 1), 62))
        return min(maxDelay, baseDelay * Double.pow2(exponent))
    }
}

extension Double {
    /// 2^exponent without Foundation's `pow` (this file needs nothing else from it).
    fileprivate static func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        var remaining = Int(exponent)
        while remaining > 0 { value *= 2; remaining -= 1 }
        return value
    }
}
