@testable import ProofService
import Synchronization
import Testing

/// The verifier's batches: results in index order whatever thread computed them, every index
/// computed exactly once, and batch after batch on the same long-lived workers.
@Suite("Bundle parallel map")
struct BundleParallelMapTests {
    @Test("results come back in order, each index computed once, for any size")
    func inOrderOnce() {
        for count in [0, 1, 2, 3, 1023, 1024, 5000] {
            let calls = Atomic<Int>(0)
            let results = BundleParallelMap.map(count) { index in
                calls.add(1, ordering: .relaxed)
                return index &* 2_654_435_761
            }
            #expect(results == (0..<count).map { $0 &* 2_654_435_761 })
            #expect(calls.load(ordering: .relaxed) == count)
        }
    }

    @Test("a batch started while the previous one is applied gives its own results; hundreds in a row")
    func overlappingBatches() {
        var previous = BundleParallelMap.start(100) { [String(repeating: "x", count: $0)] }
        for round in 1...300 {
            let next = BundleParallelMap.start(100 + round % 7) { index in [String(repeating: "y", count: index + round)] }
            let results = previous.wait()
            #expect(results.count >= 100)
            #expect(results.enumerated().allSatisfy { index, value in value.first?.count == index + (round == 1 ? 0 : round - 1) })
            previous = next
        }
        #expect(previous.wait().count == 100 + 300 % 7)
    }
}
