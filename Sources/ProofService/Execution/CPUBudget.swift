import Foundation
import Synchronization

/// How much CPU each API key may use: a bucket of CPU seconds per key, refilled at ``share``
/// (cores) and holding at most ``burst`` seconds. A job is charged the CPU time it actually took,
/// so a client sending the heaviest valid inputs spends its share in a few requests and then waits
/// (503 `busy` with `Retry-After`), while a courier's occasional large signature never notices.
final class CPUBudget: Sendable {
    /// CPU seconds a key earns per second (a fraction of one core).
    let share: Double
    /// The most CPU seconds a key may have saved up.
    let burst: Double
    /// Keys remembered; beyond it the least recently seen half is forgotten (a forgotten key starts
    /// again with a full bucket, which only ever errs towards allowing).
    let capacity: Int

    private struct Bucket {
        var credit: Double
        var updated: Double
    }

    private let buckets = Mutex<[UUID: Bucket]>([:])

    init(share: Double, burst: Double = 2, capacity: Int = 100_000) {
        self.share = max(0.001, share)
        self.burst = max(0.001, burst)
        self.capacity = capacity
    }

    /// Seconds until `key` may start a job again, or nil when it may now.
    func retryAfter(_ key: UUID, now: Double = ProcessInfo.processInfo.systemUptime) -> Double? {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return nil }
            let credit = min(burst, bucket.credit + (now - bucket.updated) * share)
            return credit > 0 ? nil : -credit / share
        }
    }

    /// Takes `seconds` of CPU from `key`'s bucket.
    func charge(_ key: UUID, seconds: Double, now: Double = ProcessInfo.processInfo.systemUptime) {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(credit: burst, updated: now)
            bucket.credit = min(burst, bucket.credit + (now - bucket.updated) * share) - seconds
            bucket.updated = now
            if buckets[key] == nil, buckets.count >= capacity {
                let keep = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(capacity / 2)
                buckets = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
            buckets[key] = bucket
        }
    }

    /// The calling thread's CPU time, in seconds.
    static func threadSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
