import Foundation
import Synchronization

/// Token buckets per API key.
public typealias RateLimiter = TokenBuckets<UUID>

/// Token buckets per key (an API key, a client address): each key may make `burst` requests at
/// once and `ratePerSecond` on average. In memory and per process: with N replicas a key gets up
/// to N times the rate.
public final class TokenBuckets<Key: Hashable & Sendable>: Sendable {
    /// The outcome for one request.
    public enum Decision: Sendable, Equatable {
        /// Go ahead.
        case allowed
        /// Refused; a token is available again after this many seconds (rounded up, at least 1).
        case limited(retryAfterSeconds: Int)
    }

    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// Sustained requests per second per key.
    public let ratePerSecond: Double
    /// Requests a key may make at once.
    public let burst: Double
    /// At most this many keys are tracked; beyond it, the least recently seen half is forgotten
    /// (a forgotten key starts again with a full bucket, which only ever errs towards allowing).
    let capacity: Int
    private let buckets: Mutex<[Key: Bucket]>

    /// A limiter; `ratePerSecond` must be positive.
    public init(ratePerSecond: Double, burst: Double, capacity: Int = 100_000) {
        precondition(ratePerSecond > 0 && burst >= 1, "a rate limiter needs a positive rate and a burst of at least 1")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.capacity = capacity
        self.buckets = Mutex([:])
    }

    /// What ``acquire(_:now:)`` would decide for `key` at `now`, without taking a token.
    public func check(_ key: Key, now: Double = monotonicSeconds()) -> Decision {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return .allowed }
            let tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * ratePerSecond)
            return tokens >= 1 ? .allowed : .limited(retryAfterSeconds: max(1, Int(((1 - tokens) / ratePerSecond).rounded(.up))))
        }
    }

    /// Takes a token for `key` at time `now` (seconds on a monotonic clock).
    public func acquire(_ key: Key, now: Double = monotonicSeconds()) -> Decision {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * ratePerSecond)
            bucket.updated = now
            let decision: Decision
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                decision = .allowed
            } else {
                decision = .limited(retryAfterSeconds: max(1, Int(((1 - bucket.tokens) / ratePerSecond).rounded(.up))))
            }
            if buckets[key] == nil, buckets.count >= capacity {
                let keep = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(capacity / 2)
                buckets = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
            buckets[key] = bucket
            return decision
        }
    }

}

/// Seconds on the system's monotonic clock.
public func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
