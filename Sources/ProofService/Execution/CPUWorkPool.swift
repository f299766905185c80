import Foundation
import NIOPosix
import Synchronization

/// Runs CPU-heavy work — parsing an upload's ink, rendering, re-rendering at another size, SVG —
/// on threads of its own, one per core, so it never occupies Swift's cooperative pool (where
/// every request handler, `/healthz` included, runs) or NIO's event loops.
///
/// Fair and bounded: one API key runs at most ``perKeyRunning`` jobs at once (the rest of its jobs
/// wait their turn, so one client cannot take every core), and heavy jobs (the largest inputs the
/// limits allow) run on threads of their own — half the cores, at a lower priority — so a few
/// clients sending the worst valid inputs leave the other cores to everyone else; each key's jobs are charged the CPU they took
/// against a budget of ``CPUBudget/share`` of a core, so sustained heavy work from one key is
/// refused until its budget refills. Heavy jobs have a budget of their own besides, for all keys
/// together (``heavyShare`` of a core) and for each key (half of it): a lower priority only helps
/// while the machine has idle moments, and a few keys sending the largest inputs at their rate
/// limit would otherwise still take a third of a core between them (Benchmarks/hostile_load.sh).
/// At most ``queueLimit`` jobs wait or run in all, and
/// at most ``perKeyLimit`` for one key; past either, ``run(for:weight:_:)`` refuses at once with
/// 503 `busy` and a `Retry-After`, instead of letting a queue grow behind one client.
public final class CPUWorkPool: Sendable {
    /// The threads, shared by every pool of the process: one per core, started once and never
    /// stopped (a process has one set of cores; each pool bounds its own admissions). Reached only
    /// through their ``Lane``, which counts the jobs waiting for them.
    private static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: cores)
        pool.start()
        return pool
    }()

    /// Heavy jobs' threads: half the cores, at a lower scheduling priority (nice
    /// ``heavyNiceness``). Work-conserving: on an idle machine a heavy job gets a whole core, but
    /// while ordinary uploads, request handlers or PostgreSQL want the CPU the kernel gives them
    /// most of it, so a few clients sending the largest valid inputs slow everyone else far less
    /// than a core each would (Benchmarks/hostile_load.sh measures it).
    private static let heavyThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: heavyThreadCount)
        pool.start()
        return pool
    }()

    /// Threads for heavy jobs: half the cores, at least one.
    public static let heavyThreadCount = max(1, cores / 2)

    /// The nice value of heavy jobs' threads (0 is normal, 19 the lowest priority).
    static let heavyNiceness: Int32 = 10

    /// The cores this process may use.
    public static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Jobs waiting or running at once, in all.
    public let queueLimit: Int
    /// Jobs waiting or running at once for one key.
    public let perKeyLimit: Int
    /// Jobs running at once for one key.
    public let perKeyRunning: Int
    /// Heavy jobs of clients waiting or running at once, in all: two per heavy thread (one key
    /// has at most one). Bounds the queue behind the heavy threads and how far all keys together
    /// can overdraw ``heavyShare`` before the refusals start.
    public var heavyLimit: Int { 2 * Self.heavyThreadCount }

    /// How much of a core a job may take.
    public enum Weight: Sendable {
        /// An ordinary signature.
        case light
        /// An input near the limits (hundreds of kilobytes, tens of thousands of points).
        case heavy
    }

    private struct KeyState {
        var admitted = 0
        var running = 0
        /// Heavy jobs admitted (at most one: ``heavyRefusal(for:)`` is asked before the job runs and
        /// charged after it, so one job at a time keeps a key's overdraft to one job).
        var heavy = 0
        /// Jobs waiting for the key's turn, oldest first.
        var waiting: [Job] = []
    }

    /// A job admitted to the pool: its work, wrapped so that running it resumes its caller.
    private struct Job: Sendable {
        var weight: Weight
        /// Runs the work (`true`) or fails it because its threads are shut down (`false`).
        var perform: @Sendable (_ active: Bool) -> Void
    }

    private struct State {
        var admitted = 0
        /// Heavy jobs admitted, of every key (at most ``heavyLimit``).
        var heavy = 0
        var keys: [UUID: KeyState] = [:]
    }

    private let state = Mutex(State())
    /// The CPU each key may use over time.
    let budget: CPUBudget
    /// The CPU all keys' heavy jobs together may use over time, as one bucket (``heavyBucket``).
    let heavyTotal: CPUBudget
    /// The CPU one key's heavy jobs may use over time: half of ``heavyShare``, so one key cannot
    /// spend every other key's heavy work.
    let heavyPerKey: CPUBudget
    /// The share of one core that heavy jobs of every key together may use.
    public var heavyShare: Double { heavyTotal.share }
    /// The one bucket of ``heavyTotal``.
    static let heavyBucket = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The default ``heavyShare``: a twentieth of the cores (a tenth of a core on two). No real
    /// signature is heavy, and the storage of a heavy upload (hundreds of kilobytes into
    /// PostgreSQL) is not charged to it, so the share is kept small.
    public static let defaultHeavyShare = 0.05 * Double(cores)

    /// A pool admitting `queueLimit` jobs at once, `perKeyLimit` per key, and running `perKeyRunning`
    /// per key (default: all cores but one, so another client always has a core); a key's jobs use
    /// `sharePerKey` of a core over time, and all keys' heavy jobs together `heavyShare` (with
    /// `heavyBurst` seconds saved up).
    public init(queueLimit: Int, perKeyLimit: Int, perKeyRunning: Int = max(1, CPUWorkPool.cores - 1), sharePerKey: Double = 1,
                heavyShare: Double = CPUWorkPool.defaultHeavyShare, heavyBurst: Double = 2) {
        self.budget = CPUBudget(share: sharePerKey)
        self.heavyTotal = CPUBudget(share: heavyShare, burst: heavyBurst)
        self.heavyPerKey = CPUBudget(share: heavyShare / 2, burst: heavyBurst / 2)
        self.queueLimit = max(1, queueLimit)
        self.perKeyLimit = max(1, perKeyLimit)
        self.perKeyRunning = max(1, perKeyRunning)
    }

    /// Runs `work` on the pool's threads on behalf of `key` (nil: work of the service itself,
    /// bounded only by the total); 503 `busy` when the pool or the key is full.
    public func run<T: Sendable>(for key: UUID?, weight: Weight = .light, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        if let key, let wait = budget.retryAfter(key) {
            throw ServiceError(.unavailable, code: "busy", detail: "This API key has used its share of the server's CPU; retry later.",
                               retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
        let heavy = weight == .heavy && key != nil
        if heavy, let refusal = heavyRefusal(for: key) { throw refusal }
        if let refusal = admit(key, heavy: heavy) { throw refusal }
        defer { release(key, heavy: heavy) }
        // Charged whether the work succeeds or throws: refusing an input costs CPU too.
        let (result, seconds) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Result<T, any Error>, Double), any Error>) in
            let job = Job(weight: weight) { active in
                guard active else { return continuation.resume(throwing: CancellationError()) }
                if weight == .heavy { ThreadPriority.lower(to: Self.heavyNiceness) }
                let start = CPUBudget.threadSeconds()
                let result = Result { try work() }
                continuation.resume(returning: (result, CPUBudget.threadSeconds() - start))
            }
            if let key {
                if takeTurn(key, or: job) { submit(job, for: key) }
            } else {
                submit(job, for: nil)
            }
        }
        if let key { budget.charge(key, seconds: seconds) }
        if heavy, let key {
            heavyPerKey.charge(key, seconds: seconds)
            heavyTotal.charge(Self.heavyBucket, seconds: seconds)
        }
        return try result.get()
    }

    /// 503 `busy` when `key` may not start heavy work now: its own heavy share, or that of all
    /// keys together, is spent, or it has a heavy job already. nil for the service's own work (no
    /// key). Callers ask before reading a large body, so a refused client does not get to send it.
    public func heavyRefusal(for key: UUID?) -> ServiceError? {
        guard let key else { return nil }
        if state.withLock({ $0.keys[key]?.heavy ?? 0 }) > 0 { return Self.heavyTaken }
        let wait = [heavyPerKey.retryAfter(key), heavyTotal.retryAfter(Self.heavyBucket)].compactMap { $0 }.max()
        guard let wait else { return nil }
        return ServiceError(.unavailable, code: "busy",
                            detail: "Large inputs have used their share of the server's CPU; retry later (ordinary signatures are not affected).",
                            retryAfterSeconds: max(1, Int(wait.rounded(.up))))
    }

    /// 503 `busy` for a heavy job while its key has one already, or every heavy place is taken.
    private static let heavyTaken = ServiceError(.unavailable, code: "busy",
                                                 detail: "Large inputs are rendered one at a time per API key; retry shortly.",
                                                 retryAfterSeconds: 1)

    /// Jobs waiting or running now (for tests and metrics).
    public var inFlight: Int { state.withLock { $0.admitted } }

    /// Counts a job in, or says why not: the pool or the key is full, or (`heavy`) the key already
    /// has a heavy job, or every heavy place is taken.
    private func admit(_ key: UUID?, heavy: Bool) -> ServiceError? {
        let busy = ServiceError(.unavailable, code: "busy", detail: "The server is busy rendering; retry shortly.", retryAfterSeconds: 1)
        return state.withLock { state -> ServiceError? in
            guard state.admitted < queueLimit else { return busy }
            if let key {
                let entry = state.keys[key, default: KeyState()]
                guard entry.admitted < perKeyLimit else { return busy }
                if heavy {
                    guard entry.heavy == 0, state.heavy < heavyLimit else { return Self.heavyTaken }
                    state.keys[key, default: KeyState()].heavy += 1
                    state.heavy += 1
                }
                state.keys[key, default: KeyState()].admitted += 1
            }
            state.admitted += 1
            return nil
        }
    }

    private func release(_ key: UUID?, heavy: Bool) {
        state.withLock { state in
            state.admitted -= 1
            guard let key, var entry = state.keys[key] else { return }
            entry.admitted -= 1
            if heavy {
                entry.heavy -= 1
                state.heavy -= 1
            }
            state.keys[key] = entry.admitted > 0 ? entry : nil
        }
    }

    /// Counts `job` as running for `key` (true: submit it now) or queues it behind the key's
    /// running jobs (false: ``submit(_:for:)`` runs it when a turn ends).
    private func takeTurn(_ key: UUID, or job: Job) -> Bool {
        state.withLock { state in
            if state.keys[key, default: KeyState()].running < perKeyRunning {
                state.keys[key, default: KeyState()].running += 1
                return true
            }
            state.keys[key, default: KeyState()].waiting.append(job)
            return false
        }
    }

    /// Ends a turn of `key`: hands it to the key's next waiting job (returned, still counted as
    /// running) or counts one job fewer running.
    private func endTurn(_ key: UUID) -> Job? {
        state.withLock { state in
            guard var entry = state.keys[key] else { return nil }
            defer { state.keys[key] = entry }
            if entry.waiting.isEmpty {
                entry.running -= 1
                return nil
            }
            return entry.waiting.removeFirst()
        }
    }

    /// Runs `job` on its threads; for a key, then the key's next waiting job, and so on. The next
    /// job runs right on the thread that finished the last one when it is of the same weight and
    /// no other job waits for those threads: a waiting upload is then started without waking its
    /// task to submit it (two thread wake-ups per upload saved when one key sends many). When
    /// others wait, it goes to the back of the queue like any job, so keys still take turns.
    private func submit(_ job: Job, for key: UUID?) {
        let lane = job.weight == .heavy ? Self.heavyLane : Self.lightLane
        lane.submit { active in
            var job = job
            while true {
                job.perform(active)
                guard let key, let next = self.endTurn(key) else { return }
                guard next.weight == job.weight, active, !lane.hasWaiting else {
                    return self.submit(next, for: key)
                }
                job = next
            }
        }
    }

    /// Runs `work` on the pool's (light) threads with no key and no admission: the service's own
    /// work that a caller already bounds (`VerificationHashing`). It waits in the same queue, so a
    /// key's next job does not take the thread ahead of it.
    static func runOnThreads<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            lightLane.submit { active in
                guard active else { return continuation.resume(throwing: CancellationError()) }
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// One set of threads and how many jobs wait for them (submitted, not started).
    private final class Lane: Sendable {
        private let threads: NIOThreadPool
        private let waiting = Atomic<Int>(0)
        init(_ threads: NIOThreadPool) { self.threads = threads }

        /// True when a job submitted here has not started yet.
        var hasWaiting: Bool { waiting.load(ordering: .relaxed) > 0 }

        /// Runs `body` on one of the threads, told whether the threads are still running.
        func submit(_ body: @escaping @Sendable (_ active: Bool) -> Void) {
            waiting.add(1, ordering: .relaxed)
            threads.submit { state in
                self.waiting.subtract(1, ordering: .relaxed)
                body(state == .active)
            }
        }
    }

    private static let lightLane = Lane(threads)
    private static let heavyLane = Lane(heavyThreads)
}
