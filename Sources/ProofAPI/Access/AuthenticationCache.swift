import Foundation
import ProofStore
import Synchronization

/// Remembers successful key look-ups for a short time, so a busy client does not cost a database
/// round trip per request. Keyed by the token's SHA-256 (raw tokens are not kept); failures are
/// never cached.
///
/// It serves entries only while it is *live*: while a ``Postgres/PostgresListener`` holds `LISTEN`
/// on ``APIKeyRepository/changeChannel``, to which every change of `api_keys` (a revocation)
/// notifies. A notification empties the cache, so a revoked key is refused as soon as the
/// notification arrives (milliseconds after the revocation commits), on every server. Without a
/// listener, or while it reconnects, every request asks the database. ``timeToLive`` bounds an
/// entry's age in any case.
final class AuthenticationCache: Sendable {
    private struct Entry {
        var actor: Actor
        var expires: ContinuousClock.Instant
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// Changes on every invalidation; a look-up that began under another generation may have
        /// read the database before the change, so its result is not remembered.
        var generation: UInt64 = 0
        var live = false
    }

    let timeToLive: Duration
    let capacity: Int
    private let state = Mutex(State())

    init(timeToLive: Duration, capacity: Int = 10_000) {
        self.timeToLive = timeToLive
        self.capacity = capacity
    }

    /// True when entries are served (a time to live, and the change listener is listening).
    var isLive: Bool { state.withLock { $0.live } }

    /// The cached actor for `tokenHash`, if still fresh and the cache is live.
    func actor(forTokenHash tokenHash: [UInt8]) -> Actor? {
        guard timeToLive > .zero else { return nil }
        let now = ContinuousClock.now
        return state.withLock { state in
            guard state.live, let entry = state.entries[tokenHash] else { return nil }
            if entry.expires < now {
                state.entries[tokenHash] = nil
                return nil
            }
            return entry.actor
        }
    }

    /// The current generation: read it before asking the database, pass it to ``remember(_:forTokenHash:generation:)``.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Remembers `actor` for `tokenHash`, unless the cache was invalidated since `generation` was read.
    func remember(_ actor: Actor, forTokenHash tokenHash: [UInt8], generation: UInt64) {
        guard timeToLive > .zero else { return }
        let expires = ContinuousClock.now + timeToLive
        state.withLock { state in
            guard state.live, state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[tokenHash] = Entry(actor: actor, expires: expires)
        }
    }

    /// Forgets every entry and sets whether entries are served from now on: `true` once the
    /// listener listens, `false` when it lost its connection (a notification may have been missed).
    func invalidate(live: Bool) {
        state.withLock { state in
            state.entries.removeAll()
            state.generation &+= 1
            state.live = live
        }
    }
}
