import Foundation
@testable import ProofService
import Synchronization
import Testing

@Suite("CPU work pool")
struct CPUWorkPoolTests {
    /// Jobs that block their pool thread until the test lets them go.
    final class Gate: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        func job() -> Int {
            started.add(1, ordering: .sequentiallyConsistent)
            semaphore.wait()
            return 1
        }
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    static let busy = ServiceError(.unavailable, code: "busy", detail: "The server is busy rendering; retry shortly.", retryAfterSeconds: 1)

    @Test("past its queue limit, and past a key's share, work is refused at once with 503 busy and Retry-After",
          .enabled(if: CPUWorkPool.cores >= 2, "Bob's job needs a second thread"))
    func admissionIsBounded() async throws {
        let pool = CPUWorkPool(queueLimit: 3, perKeyLimit: 2, perKeyRunning: 1)
        let gate = Gate()
        let (alice, bob, carol) = (UUID(), UUID(), UUID())
        let first = Task { try await pool.run(for: alice) { gate.job() } }
        try await Self.waitUntil { gate.started.load(ordering: .sequentiallyConsistent) == 1 }
        // Alice's second job is admitted but waits for her first: one key runs one job at once here.
        let second = Task { try await pool.run(for: alice) { gate.job() } }
        try await Self.waitUntil { pool.inFlight == 2 }
        #expect(gate.started.load(ordering: .sequentiallyConsistent) == 1)
        // A third is over Alice's share: refused, though the pool has room.
        await #expect(throws: Self.busy) { try await pool.run(for: alice) { 0 } }
        // Bob's job runs beside Alice's (another key, another turn).
        let third = Task { try await pool.run(for: bob) { gate.job() } }
        try await Self.waitUntil { gate.started.load(ordering: .sequentiallyConsistent) == 2 }
        // The pool is full: Carol is refused.
        await #expect(throws: Self.busy) { try await pool.run(for: carol) { 0 } }

        for _ in 0..<3 { gate.semaphore.signal() }
        #expect(try await first.value == 1)
        #expect(try await second.value == 1)
        #expect(try await third.value == 1)
        #expect(gate.started.load(ordering: .sequentiallyConsistent) == 3)
        #expect(pool.inFlight == 0)
        // Everything is admitted again once the jobs have ended.
        #expect(try await pool.run(for: alice) { 7 } == 7)
        #expect(try await pool.run(for: nil) { 8 } == 8)
    }

    @Test("heavy jobs run on threads of lower priority; ordinary jobs at normal priority")
    func heavyJobsRunBelowOrdinaryOnes() async throws {
        let pool = CPUWorkPool(queueLimit: 8, perKeyLimit: 8)
        let key = UUID()
        let light = try await pool.run(for: key, weight: .light) { ThreadPriority.current() }
        let heavy = try await pool.run(for: key, weight: .heavy) { ThreadPriority.current() }
        #expect(light == 0, "an ordinary upload's parse and render keep the process's priority")
        #expect(heavy == CPUWorkPool.heavyNiceness, "the largest inputs yield the CPU to everything else")
        let again = try await pool.run(for: nil, weight: .light) { ThreadPriority.current() }
        #expect(again == 0, "the ordinary threads never inherit the heavy threads' priority")
    }

    @Test("a job's error reaches the caller and frees its place and its turn")
    func errorsFreeTheirPlace() async throws {
        struct Broken: Error {}
        let pool = CPUWorkPool(queueLimit: 1, perKeyLimit: 1, perKeyRunning: 1)
        let key = UUID()
        await #expect(throws: Broken.self) { try await pool.run(for: key) { () throws -> Int in throw Broken() } }
        #expect(pool.inFlight == 0)
        #expect(try await pool.run(for: key) { 1 } == 1)
    }
}

@Suite("CPU budget per key")
struct CPUBudgetTests {
    @Test("a key that spent more CPU than its saved-up burst waits for its share to refill; other keys do not")
    func spendingWaitsForTheShare() {
        let budget = CPUBudget(share: 0.25, burst: 2)
        let (heavy, light) = (UUID(), UUID())
        #expect(budget.retryAfter(heavy, now: 100) == nil, "a new key starts with a full bucket")
        budget.charge(heavy, seconds: 1.5, now: 100)
        #expect(budget.retryAfter(heavy, now: 100) == nil, "0.5 s of credit left")
        budget.charge(heavy, seconds: 1.5, now: 100)
        let wait = budget.retryAfter(heavy, now: 100)
        #expect(wait.map { abs($0 - 4) < 1e-9 } == true, "1 s in debt at 0.25 core per second: 4 s (got \(String(describing: wait)))")
        #expect(budget.retryAfter(heavy, now: 103) != nil)
        #expect(budget.retryAfter(heavy, now: 104.01) == nil)
        budget.charge(light, seconds: 0.01, now: 100)
        #expect(budget.retryAfter(light, now: 100) == nil)
    }
}
