import Foundation

/// Runs a bounded batch of independent checks on all cores and returns their results in order:
/// the verifier reads, inflates, hashes and parses a batch of bundle entries at once, then applies
/// the results one by one in archive order (so reports stay the same as a serial pass). Used by
/// `countersign verify`, a command-line run, not on the service's event loop or cooperative pool.
enum BundleParallelMap {
    /// Entries (or segment files) handled per batch: enough to keep both cores busy, few enough
    /// that a batch's contents stay a few megabytes.
    static let batchSize = 256

    /// `transform(0..<count)` in order, run concurrently when there is more than one core.
    static func map<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) -> T) -> [T] {
        guard count > 1, CPUWorkPool.cores > 1 else { return (0..<count).map(transform) }
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = Slots(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: count) { index in slots.base.advanced(by: index).initialize(to: transform(index)) }
            initialized = count
        }
    }

    /// The result buffer, shared by the iterations: each index is written exactly once, by the
    /// one iteration that owns it, and read only after `concurrentPerform` has returned.
    private struct Slots<T>: @unchecked Sendable {
        let base: UnsafeMutablePointer<T>
    }
}
