import Foundation
@testable import ProofService
import Synchronization
import Testing

// Serialized: every pool shares the process's threads, and gated jobs hold them.
@Suite("CPU work pool", .serialized)
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

    @Test("heavy work has a share of its own, per key and for all keys together; light work and the service's own work go on")
    func heavyWorkHasAShareOfItsOwn() async throws {
        let pool = CPUWorkPool(queueLimit: 8, perKeyLimit: 8, heavyShare: 0.2)
        let (alice, bob) = (UUID(), UUID())
        #expect(pool.heavyRefusal(for: alice) == nil)
        // Alice's heavy jobs took 1 s more than the 1 s she may save up (half of all keys' 2 s); her share is half of 0.2 core.
        pool.heavyPerKey.charge(alice, seconds: 2)
        let refusal = try #require(pool.heavyRefusal(for: alice))
        #expect(refusal.kind == .unavailable && refusal.code == "busy")
        #expect(refusal.retryAfterSeconds == 10, "1 s in debt at 0.1 core per second")
        await #expect(throws: ServiceError.self) { try await pool.run(for: alice, weight: .heavy) { 1 } }
        #expect(try await pool.run(for: alice, weight: .light) { 2 } == 2, "an ordinary signature never waits for the heavy share")
        #expect(pool.heavyRefusal(for: bob) == nil, "another key's heavy work goes on")
        #expect(try await pool.run(for: bob, weight: .heavy) { 3 } == 3)
        // All keys' heavy jobs together are 1 s over: Bob's heavy work waits too.
        pool.heavyTotal.charge(CPUWorkPool.heavyBucket, seconds: 3)
        // 1 s in debt (and Bob's job's few microseconds) at 0.2 core per second, rounded up.
        #expect(pool.heavyRefusal(for: bob)?.retryAfterSeconds.map { (5...6).contains($0) } == true)
        await #expect(throws: ServiceError.self) { try await pool.run(for: bob, weight: .heavy) { 4 } }
        #expect(try await pool.run(for: bob, weight: .light) { 5 } == 5)
        #expect(try await pool.run(for: nil, weight: .heavy) { 6 } == 6, "the service's own work has no key to refuse")
    }

    @Test("a key runs one heavy job at a time, and all keys together two per heavy thread; light jobs are not counted")
    func heavyJobsOneAtATimePerKey() async throws {
        let pool = CPUWorkPool(queueLimit: 16, perKeyLimit: 16)
        let gate = Gate()
        let keys = (0...pool.heavyLimit).map { _ in UUID() }
        let first = Task { try await pool.run(for: keys[0], weight: .heavy) { gate.job() } }
        try await Self.waitUntil { pool.inFlight == 1 }
        // Alice's second heavy job is refused at once (before its body would be read); her light one is
        // admitted (it waits for her turn, as any second job of hers would).
        #expect(pool.heavyRefusal(for: keys[0])?.code == "busy")
        await #expect(throws: ServiceError.self) { try await pool.run(for: keys[0], weight: .heavy) { 0 } }
        let light = Task { try await pool.run(for: keys[0], weight: .light) { 1 } }
        try await Self.waitUntil { pool.inFlight == 2 }
        // Other keys' heavy jobs are admitted up to the limit; one more key is refused.
        var others: [Task<Int, any Error>] = []
        for key in keys[1..<pool.heavyLimit] { others.append(Task { try await pool.run(for: key, weight: .heavy) { gate.job() } }) }
        try await Self.waitUntil { pool.inFlight == pool.heavyLimit + 1 }
        await #expect(throws: ServiceError.self) { try await pool.run(for: keys[pool.heavyLimit], weight: .heavy) { 0 } }
        for _ in 0..<pool.heavyLimit { gate.semaphore.signal() }
        #expect(try await first.value == 1)
        #expect(try await light.value == 1)
        for task in others { #expect(try await task.value == 1) }
        #expect(try await pool.run(for: keys[0], weight: .heavy) { 3 } == 3, "her turn again once the first has ended")
        #expect(try await pool.run(for: keys[pool.heavyLimit], weight: .heavy) { 4 } == 4)
        #expect(try await pool.run(for: nil, weight: .heavy) { 5 } == 5, "the service's own work is not a client's")
    }

    /// Burns about `seconds` of the calling thread's CPU.
    static func burn(_ seconds: Double) -> Int {
        let end = CPUBudget.threadSeconds() + seconds
        var spins = 0
        while CPUBudget.threadSeconds() < end { spins &+= 1 }
        return spins
    }

    @Test("a heavy job's CPU is charged to its key's heavy share and to all keys'; a light job's is not")
    func heavyJobsAreCharged() async throws {
        // A share so small that no wall time of a loaded test run refills what a job is charged.
        let pool = CPUWorkPool(queueLimit: 8, perKeyLimit: 8, heavyShare: 0.001)
        let (alice, bob) = (UUID(), UUID())
        // 10 ms of credit left in Alice's heavy bucket (1 s saved up at most), and in all keys' one (2 s).
        pool.heavyPerKey.charge(alice, seconds: 0.99)
        pool.heavyTotal.charge(CPUWorkPool.heavyBucket, seconds: 1.99)
        _ = try await pool.run(for: alice, weight: .light) { Self.burn(0.2) }
        #expect(pool.heavyRefusal(for: alice) == nil, "200 ms of light work left the heavy shares alone")
        _ = try await pool.run(for: alice, weight: .heavy) { Self.burn(0.2) }
        #expect(pool.heavyRefusal(for: alice) != nil, "200 ms of heavy work spent Alice's last 10 ms")
        #expect(pool.heavyRefusal(for: bob) != nil, "and all keys' last 10 ms")
    }

    @Test("a key's waiting jobs run one at a time, in the order they came")
    func keyJobsRunInOrder() async throws {
        let pool = CPUWorkPool(queueLimit: 16, perKeyLimit: 16, perKeyRunning: 1)
        final class Recorder: Sendable {
            let gate = Gate()
            let order = Mutex<[Int]>([]), running = Atomic<Int>(0), most = Atomic<Int>(0)
            func job(_ index: Int) -> Int {
                let now = running.add(1, ordering: .sequentiallyConsistent).newValue
                most.max(now, ordering: .sequentiallyConsistent)
                if index == 0 { _ = gate.job() }
                order.withLock { $0.append(index) }
                running.subtract(1, ordering: .sequentiallyConsistent)
                return index
            }
        }
        let key = UUID(), recorder = Recorder()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<6 {
                group.addTask { try await pool.run(for: key) { recorder.job(index) } }
                // Each admitted before the next is sent, so "the order they came" is known.
                try await Self.waitUntil { pool.inFlight == index + 1 }
            }
            recorder.gate.semaphore.signal()
            try await group.waitForAll()
        }
        #expect(recorder.order.withLock { $0 } == Array(0..<6))
        #expect(recorder.most.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test("a finished job's thread takes its key's next job only when no other key's job waits for a thread")
    func turnsDoNotStarveOtherKeys() async throws {
        let pool = CPUWorkPool(queueLimit: 64, perKeyLimit: 16, perKeyRunning: 1)
        // One busy key per thread, each with two more jobs waiting for its turn: every thread is taken.
        let busy = (0..<CPUWorkPool.cores).map { _ in (key: UUID(), gate: Gate()) }
        let other = Gate()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for (key, gate) in busy {
                for _ in 0..<3 { group.addTask { try await pool.run(for: key) { gate.job() } } }
            }
            try await Self.waitUntil { busy.allSatisfy { $0.gate.started.load(ordering: .sequentiallyConsistent) == 1 } }
            try await Self.waitUntil { pool.inFlight == 3 * busy.count }
            group.addTask { try await pool.run(for: UUID()) { other.job() } }
            try await Self.waitUntil { pool.inFlight == 3 * busy.count + 1 }
            // One busy job ends: its thread must take the other key's waiting job, not its own key's next.
            busy[0].gate.semaphore.signal()
            try await Self.waitUntil { other.started.load(ordering: .sequentiallyConsistent) == 1 }
            #expect(busy[0].gate.started.load(ordering: .sequentiallyConsistent) == 1)
            other.semaphore.signal()
            for (_, gate) in busy { for _ in 0..<3 { gate.semaphore.signal() } }
            try await group.waitForAll()
        }
        #expect(pool.inFlight == 0)
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
