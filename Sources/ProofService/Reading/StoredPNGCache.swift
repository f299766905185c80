import Synchronization

/// Keeps recently served stored PNGs in memory, keyed by delivery reference, so a hot proof does
/// not cost a database read per fetch.
///
/// Safe because a stored proof never changes (`proofs` refuses UPDATE and DELETE), so an entry
/// can never be stale while its proof exists. Entries still expire after ``timeToLive`` so that a
/// proof removed by the retention procedure (a dropped month, docs/scaling.md) stops being served
/// within that time. Bounded by ``byteLimit`` bytes of PNG; when full, the least recently used
/// quarter is dropped. Authorisation and the audit event of each read are not cached: the routes
/// do both for every request.
public final class StoredPNGCache: Sendable {
    /// One cached image.
    public struct Entry: Sendable {
        /// SHA-256 of ``bytes`` (the ETag).
        public var sha256: [UInt8]
        /// The stored PNG.
        public var bytes: [UInt8]

        /// Creates an entry.
        public init(sha256: [UInt8], bytes: [UInt8]) {
            self.sha256 = sha256
            self.bytes = bytes
        }
    }

    private struct Slot {
        var entry: Entry
        var expires: ContinuousClock.Instant
        var lastUse: UInt64
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    /// Most PNG bytes kept (0 turns the cache off).
    public let byteLimit: Int
    /// How long an entry is served before it is read again from the database.
    public let timeToLive: Duration
    private let state = Mutex(State())

    /// Creates a cache of at most `byteLimit` bytes whose entries live `timeToLive`.
    public init(byteLimit: Int, timeToLive: Duration = .seconds(600)) {
        self.byteLimit = max(0, byteLimit)
        self.timeToLive = timeToLive
    }

    /// The cached image of delivery `reference`, if present and fresh.
    public func entry(for reference: String) -> Entry? {
        guard byteLimit > 0 else { return nil }
        let now = ContinuousClock.now
        return state.withLock { state in
            guard var slot = state.slots[reference] else { return nil }
            guard slot.expires > now else {
                state.slots[reference] = nil
                state.bytes -= slot.entry.bytes.count
                return nil
            }
            state.clock += 1
            slot.lastUse = state.clock
            state.slots[reference] = slot
            return slot.entry
        }
    }

    /// Drops the image of delivery `reference` (its delivery was erased).
    public func forget(_ reference: String) {
        state.withLock { state in
            guard let old = state.slots.removeValue(forKey: reference) else { return }
            state.bytes -= old.entry.bytes.count
        }
    }

    /// Remembers `entry` as the image of delivery `reference`; images larger than a quarter of the
    /// limit are not kept.
    public func remember(_ entry: Entry, for reference: String) {
        let size = entry.bytes.count
        guard byteLimit > 0, size <= byteLimit / 4 else { return }
        let expires = ContinuousClock.now + timeToLive
        state.withLock { state in
            if let old = state.slots[reference] { state.bytes -= old.entry.bytes.count }
            state.clock += 1
            state.slots[reference] = Slot(entry: entry, expires: expires, lastUse: state.clock)
            state.bytes += size
            guard state.bytes > byteLimit else { return }
            // Drop the least recently used quarter (at least enough to fit): amortised O(log n) per insert.
            let byAge = state.slots.sorted { $0.value.lastUse < $1.value.lastUse }
            let target = byteLimit - byteLimit / 4
            for (key, slot) in byAge where state.bytes > target {
                state.slots[key] = nil
                state.bytes -= slot.entry.bytes.count
            }
        }
    }

    /// Bytes currently held (for tests and metrics).
    public var storedBytes: Int { state.withLock { $0.bytes } }

    /// Number of images currently held.
    public var count: Int { state.withLock { $0.slots.count } }
}
