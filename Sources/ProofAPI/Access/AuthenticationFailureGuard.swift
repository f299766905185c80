import Foundation
import Synchronization

/// Keeps clients without a valid key from costing the database: failed authentications are
/// counted per client address (token buckets), and an address that used up its burst is refused
/// with 429 before its next uncached look-up; a token found unknown is remembered for a short
/// time, so repeating it is refused without a query.
///
/// A request without a peer address (the in-process test router) is never limited: there is
/// nothing to count it against.
final class AuthenticationFailureGuard: Sendable {
    let failures: TokenBuckets<String>
    /// How long an unknown token's hash is answered 401 without asking the database (a key made in
    /// that time works once it passes).
    let unknownTokenTTL: Duration
    let capacity: Int
    private let unknown = Mutex<[[UInt8]: ContinuousClock.Instant]>([:])

    init(ratePerSecond: Double, burst: Double, unknownTokenTTL: Duration = .seconds(10), capacity: Int = 10_000) {
        self.failures = TokenBuckets(ratePerSecond: ratePerSecond, burst: burst)
        self.unknownTokenTTL = unknownTokenTTL
        self.capacity = capacity
    }

    /// Seconds until `address` may try again, when it has used up its failures.
    func retryAfter(_ address: String?) -> Int? {
        guard let address, case .limited(let seconds) = failures.check(address) else { return nil }
        return seconds
    }

    /// Whether `tokenHash` was found unknown within the last ``unknownTokenTTL``.
    func isKnownUnknown(_ tokenHash: [UInt8]) -> Bool {
        let now = ContinuousClock.now
        return unknown.withLock { entries in
            guard let expires = entries[tokenHash] else { return false }
            if expires < now { entries[tokenHash] = nil }
            return expires >= now
        }
    }

    /// Counts a failed authentication from `address`; an unknown token's hash is remembered.
    func recordFailure(_ address: String?, unknownTokenHash: [UInt8]? = nil) {
        if let address { _ = failures.acquire(address) }
        guard let unknownTokenHash else { return }
        let expires = ContinuousClock.now + unknownTokenTTL
        unknown.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[unknownTokenHash] = expires
        }
    }
}
