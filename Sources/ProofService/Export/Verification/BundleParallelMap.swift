import Foundation

/// Runs a bounded batch of independent checks on all cores and returns their results in order:
/// the verifier reads, inflates, hashes and parses a batch of bundle entries at once, then applies
/// the results one by one in archive order (so reports stay the same as a serial pass). Used by
/// `countersign verify`, a command-line run, not on the service's event loop or cooperative pool.
enum BundleParallelMap {
    /// Entries handled per batch (about 200 proofs): each batch ends in a wait for its slowest
    /// entry, which on a loaded machine 1,024 made rarer than 256 did (4,024 against 3,559
    /// proofs/s, medians of three alternating runs); what a batch keeps (digests, parsed
    /// `metadata.json` files) stays about a megabyte.
    static let batchSize = 1024

    /// `transform(0..<count)` in order, run concurrently when there is more than one core.
    static func map<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) -> T) -> [T] {
        guard count > 1, CPUWorkPool.cores > 1 else { return (0..<count).map(transform) }
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = Slots(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: count) { index in slots.base.advanced(by: index).initialize(to: transform(index)) }
            initialized = count
        }
    }

    /// Starts ``map(_:_:)`` on another thread and returns at once: the caller applies the previous
    /// batch's results while this one is read (``Pending/wait()`` gives them).
    static func start<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) -> T) -> Pending<T> {
        let pending = Pending<T>()
        pending.group.enter()
        DispatchQueue.global().async {
            pending.results = map(count, transform)
            pending.group.leave()
        }
        return pending
    }

    /// The results of a batch started with ``start(_:_:)``.
    final class Pending<T: Sendable>: @unchecked Sendable {
        fileprivate let group = DispatchGroup()
        /// Written once by the starting thread before it leaves `group`, read only after `wait()`.
        fileprivate var results: [T] = []

        /// Blocks until the batch is done, then gives its results in order.
        func wait() -> [T] {
            group.wait()
            return results
        }
    }

    /// The result buffer, shared by the iterations: each index is written exactly once, by the
    /// one iteration that owns it, and read only after `concurrentPerform` has returned.
    private struct Slots<T>: @unchecked Sendable {
        let base: UnsafeMutablePointer<T>
    }
}
