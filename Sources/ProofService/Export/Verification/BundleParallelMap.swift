import Foundation
import Synchronization

/// Runs a bounded batch of independent checks on all cores and returns their results in order:
/// the verifier reads, inflates, hashes and parses a batch of bundle entries at once, then applies
/// the results one by one in archive order (so reports stay the same as a serial pass). Used by
/// `countersign verify`, a command-line run, not on the service's event loop or cooperative pool.
///
/// Batches run on ``Workers``, one long-lived thread per core, taking indices from a shared
/// counter. Dispatch's global queue (`concurrentPerform` inside `async`) was used before: on this
/// 2-core host it ran most batches on one thread, leaving a core idle for two thirds of a
/// verification. New threads per batch used both cores, but each left a few kilobytes behind, so
/// memory grew with the bundle.
enum BundleParallelMap {
    /// Entries handled per batch (about 200 proofs): each batch ends in a wait for its slowest
    /// entry, which on a loaded machine 1,024 made rarer than 256 did (4,024 against 3,559
    /// proofs/s, medians of three alternating runs); what a batch keeps (digests, parsed
    /// `metadata.json` files) stays about a megabyte.
    static let batchSize = 1024

    /// `transform(0..<count)` in order, run concurrently when there is more than one core.
    static func map<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) -> T) -> [T] {
        guard count > 1, CPUWorkPool.cores > 1 else { return (0..<count).map(transform) }
        return start(count, transform).wait()
    }

    /// Starts ``map(_:_:)`` on other threads and returns at once: the caller applies the previous
    /// batch's results while this one is read (``Pending/wait()`` gives them).
    static func start<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) -> T) -> Pending<T> {
        let pending = Pending<T>(count: count)
        for _ in 0..<min(count, CPUWorkPool.cores) {
            pending.group.enter()
            Workers.shared.submit {
                pending.run(transform)
                pending.group.leave()
            }
        }
        return pending
    }

    /// One thread per core for the life of the process, running submitted jobs in order.
    private final class Workers: @unchecked Sendable {
        static let shared = Workers(count: CPUWorkPool.cores)
        /// Guards `jobs`; its threads wait on it for the next job.
        private let condition = NSCondition()
        private var jobs: [@Sendable () -> Void] = []

        private init(count: Int) {
            for _ in 0..<count { Thread { [unowned self] in self.loop() }.start() }
        }

        func submit(_ job: @escaping @Sendable () -> Void) {
            condition.lock()
            jobs.append(job)
            condition.signal()
            condition.unlock()
        }

        private func loop() -> Never {
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
    }

    /// The results of a batch started with ``start(_:_:)``. Each index is claimed from `next` by
    /// exactly one thread, which initialises its slot; the slots are read only after every thread
    /// has left `group`.
    final class Pending<T: Sendable>: @unchecked Sendable {
        fileprivate let group = DispatchGroup()
        private let count: Int
        private let slots: UnsafeMutablePointer<T>
        private let next = Atomic<Int>(0)
        private var taken = false

        fileprivate init(count: Int) {
            self.count = count
            slots = .allocate(capacity: max(count, 1))
        }

        deinit {
            if !taken {
                group.wait()
                slots.deinitialize(count: count)
            }
            slots.deallocate()
        }

        fileprivate func run(_ transform: (Int) -> T) {
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < count else { return }
                slots.advanced(by: index).initialize(to: transform(index))
            }
        }

        /// Blocks until the batch is done, then gives its results in order (once).
        func wait() -> [T] {
            group.wait()
            precondition(!taken, "a batch's results are taken once")
            taken = true
            return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                buffer.baseAddress?.moveInitialize(from: slots, count: count)
                initialized = count
            }
        }
    }
}
