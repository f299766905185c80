import Foundation
import ProofStore
import Synchronization

/// Remembers successful key look-ups for a short time, so a busy client does not cost a database
/// round trip per request. Keyed by the token's SHA-256 (raw tokens are not kept); failures are
/// never cached. A revoked key stops working within ``timeToLive``.
final class AuthenticationCache: Sendable {
    private struct Entry {
        var actor: Actor
        var expires: ContinuousClock.Instant
    }

    let timeToLive: Duration
    let capacity: Int
    private let entries = Mutex<[[UInt8]: Entry]>([:])

    init(timeToLive: Duration, capacity: Int = 10_000) {
        self.timeToLive = timeToLive
        self.capacity = capacity
    }

    /// The cached actor for `tokenHash`, if still fresh.
    func actor(forTokenHash tokenHash: [UInt8]) -> Actor? {
        guard timeToLive > .zero else { return nil }
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[tokenHash] else { return nil }
            if entry.expires < now {
                entries[tokenHash] = nil
                return nil
            }
            return entry.actor
        }
    }

    /// Remembers `actor` for `tokenHash`.
    func remember(_ actor: Actor, forTokenHash tokenHash: [UInt8]) {
        guard timeToLive > .zero else { return }
        let expires = ContinuousClock.now + timeToLive
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[tokenHash] = Entry(actor: actor, expires: expires)
        }
    }
}
