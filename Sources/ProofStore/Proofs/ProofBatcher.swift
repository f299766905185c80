import Postgres
import Synchronization

/// Group commit for proof uploads: proofs that are ready while an earlier transaction is storing
/// proofs go into the database together, in the next one.
///
/// Each upload's transaction costs a `BEGIN`, the lock of its audit chain, an audit insert, a chain
/// head update, a `COMMIT` (a WAL flush) and its round trips, whatever it stores; under load those
/// are a large part of the work per upload (docs/decisions/0030-upload-group-commit.md). Up to
/// ``maxInFlight`` transactions (one by default) run at once. A proof that finds a free place
/// stores itself at once, in its own task (nothing is handed to another thread); proofs arriving
/// while every place is taken queue, and the next transaction stores all of them (up to
/// ``maxBatch``): their own statements, one audit append for all (each chain locked once,
/// ascending), one commit. A batch goes in reference order, so two batches lock deliveries in the
/// same order.
///
/// Every proof is still acknowledged only once it is committed, with its own event and webhook
/// event. A batch stores all its proofs or none: when the database refuses one of them (a second
/// proof for a delivery, a revoked device key, a deadlock), the batch rolls back and each of its
/// proofs is stored again in a transaction of its own, so each caller gets its own answer. Errors
/// after which the commit may have gone through (a broken connection) fail every proof of the
/// batch, as they would have failed each alone.
///
/// No lock held elsewhere may stall every upload: a transaction of the batcher waits at most
/// `lockWait` for a row lock (a delivery being cancelled, a chain held by a slow commit); past
/// it, its proofs are stored again on their own, outside the batcher, where only they wait.
final class ProofBatcher: Sendable {
    /// Most proofs in one transaction.
    let maxBatch: Int
    /// Most transactions at once.
    let maxInFlight: Int
    /// The longest a batcher's transaction waits for a lock (PostgreSQL's `lock_timeout`), in
    /// milliseconds.
    let lockWaitMilliseconds: Int

    private struct Waiter {
        var pending: PendingProof
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var queue: [Waiter] = []
        var inFlight = 0
        var counts = ProofBatchCounts()
    }

    /// Stores proofs in one transaction, all or none; with a lock wait (milliseconds), `lock_timeout`
    /// is set to it.
    private let store: @Sendable ([PendingProof], _ lockWaitMilliseconds: Int?) async throws -> Void
    private let state = Mutex(State())

    /// A batcher storing proofs with `store` (all or none).
    init(maxBatch: Int, maxInFlight: Int, lockWait: Duration,
         store: @escaping @Sendable ([PendingProof], _ lockWaitMilliseconds: Int?) async throws -> Void) {
        precondition(maxBatch >= 1 && maxInFlight >= 1, "a batcher stores at least one proof at a time")
        self.maxBatch = maxBatch
        self.maxInFlight = maxInFlight
        let (seconds, attoseconds) = lockWait.components
        self.lockWaitMilliseconds = max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        self.store = store
    }

    /// Stores `pending`; returns once it is committed.
    func record(_ pending: PendingProof) async throws {
        let leads = state.withLock { state in
            guard state.inFlight < maxInFlight else { return false }
            state.inFlight += 1
            state.counts.transactions += 1
            state.counts.alone += 1
            state.counts.largest = max(state.counts.largest, 1)
            return true
        }
        if leads {
            let outcome: Result<Void, any Error>
            do {
                try await store([pending], lockWaitMilliseconds)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            finishTransaction()
            if case .failure(let error) = outcome, Self.waitedTooLong(error) {
                state.withLock { $0.counts.retried += 1 }
                return try await store([pending], nil)
            }
            return try outcome.get()
        }
        try await withCheckedThrowingContinuation { continuation in
            let drains = state.withLock { state in
                state.queue.append(Waiter(pending: pending, continuation: continuation))
                guard state.inFlight < maxInFlight else { return false }
                state.inFlight += 1
                return true
            }
            if drains { Task { await drain() } }
        }
    }

    /// Proofs waiting for a transaction now.
    var queued: Int { state.withLock { $0.queue.count } }

    /// What the batcher has done so far.
    var statistics: ProofBatchCounts { state.withLock { $0.counts } }

    /// A transaction ended: its place goes to the queue, if anything waits there.
    private func finishTransaction() {
        let drains = state.withLock { state in
            if state.queue.isEmpty {
                state.inFlight -= 1
                return false
            }
            return true
        }
        if drains { Task { await drain() } }
    }

    /// Stores what the queue holds, a batch at a time, then gives up its place.
    private func drain() async {
        while true {
            let batch: [Waiter] = state.withLock { state in
                let batch = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty {
                    state.inFlight -= 1
                } else {
                    state.counts.transactions += 1
                    state.counts.largest = max(state.counts.largest, batch.count)
                    if batch.count == 1 { state.counts.alone += 1 }
                }
                return batch
            }
            if batch.isEmpty { return }
            await run(batch.sorted { $0.pending.reference < $1.pending.reference })
        }
    }

    /// Stores `batch` in one transaction. When the database refuses it, or it waited too long for
    /// a lock, its proofs are stored again one by one, each in its own task, and the queue goes on.
    private func run(_ batch: [Waiter]) async {
        do {
            try await store(batch.map(\.pending), lockWaitMilliseconds)
            if batch.count > 1 { state.withLock { $0.counts.together += batch.count } }
            for waiter in batch { waiter.continuation.resume() }
        } catch where Self.rolledBack(error) && (batch.count > 1 || Self.waitedTooLong(error)) {
            state.withLock { $0.counts.retried += batch.count }
            for waiter in batch {
                Task { [store] in
                    do {
                        try await store([waiter.pending], nil)
                        waiter.continuation.resume()
                    } catch {
                        waiter.continuation.resume(throwing: error)
                    }
                }
            }
        } catch {
            for waiter in batch { waiter.continuation.resume(throwing: error) }
        }
    }

    /// True for PostgreSQL's `lock_timeout` (SQLSTATE 55P03): the transaction waited longer than
    /// ``lockWaitMilliseconds`` for a lock and was rolled back.
    static func waitedTooLong(_ error: any Error) -> Bool {
        (error as? PostgresError)?.sqlState == "55P03"
    }

    /// True when `error` means the database refused the batch and kept none of it: a check of ours
    /// on a statement's answer (raised before the commit is sent), or an error the server reported
    /// for a statement (it rolls the transaction back). Not a lost connection or a pool timeout:
    /// the commit may have gone through, and storing again would answer 409 for a stored proof.
    static func rolledBack(_ error: any Error) -> Bool {
        if error is ProofStoreError { return true }
        guard let error = error as? PostgresError, error.sqlState != nil else { return false }
        switch error.kind {
        case .connectionFailed, .connectionLost, .serverUnavailable, .poolTimeout, .poolClosed: return false
        default: return true
        }
    }
}
