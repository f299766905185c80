/// The bookkeeping of a bounded pool: idle connections, how many are open, and who waits.
///
/// It never blocks: connecting and closing happen in `PostgresClient` on its thread pool.
actor ConnectionPool {
    /// What a caller is granted: an idle connection, or the right to open a new one.
    enum Grant: Sendable {
        case connection(PostgresConnection)
        case openSlot
    }

    private struct Waiter {
        let continuation: CheckedContinuation<Grant, any Error>
        let timer: Task<Void, Never>
    }

    let capacity: Int
    private var idle: [PostgresConnection] = []
    /// Connections that exist or are being opened (idle + leased + connecting).
    private var open = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var waitOrder: [UInt64] = []
    private var nextWaiterID: UInt64 = 0
    private var closed = false
    /// Acquisitions that found the pool exhausted and queued (since the pool was made).
    private var totalWaits = 0
    /// Queued acquisitions that gave up at their timeout.
    private var totalTimeouts = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A snapshot for metrics and tests.
    var statistics: PostgresPoolStatistics {
        PostgresPoolStatistics(capacity: capacity, open: open, idle: idle.count, waiting: waiters.count,
                               totalWaits: totalWaits, totalTimeouts: totalTimeouts)
    }

    /// Takes a usable idle connection, or a slot to open one, or waits until `timeout`.
    func acquire(timeout: Duration) async throws -> Grant {
        if closed { throw PostgresError(.poolClosed, message: "the connection pool is shut down") }
        while let connection = idle.popLast() {
            if connection.isUsable { return .connection(connection) }
            open -= 1  // the server closed it while idle; dropping it frees the PGconn
        }
        if open < capacity {
            open += 1
            return .openSlot
        }
        let id = nextWaiterID
        nextWaiterID &+= 1
        totalWaits += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    await self?.timeOut(waiter: id, after: timeout)
                }
                waiters[id] = Waiter(continuation: continuation, timer: timer)
                waitOrder.append(id)
            }
        } onCancel: {
            Task { await self.fail(waiter: id, with: CancellationError()) }
        }
    }

    /// Returns a healthy connection: to the longest waiter, else to the idle list.
    func checkIn(_ connection: PostgresConnection) {
        if closed {
            open -= 1
            return
        }
        if let waiter = popWaiter() {
            waiter.continuation.resume(returning: .connection(connection))
        } else {
            idle.append(connection)
        }
    }

    /// Forgets a broken connection (or a failed open) and lets a waiter open a replacement.
    func discard() {
        open -= 1
        if !closed, let waiter = popWaiter() {
            open += 1
            waiter.continuation.resume(returning: .openSlot)
        }
    }

    /// Refuses new work, fails waiters and hands back the idle connections for closing.
    func close() -> [PostgresConnection] {
        closed = true
        while let waiter = popWaiter() {
            waiter.continuation.resume(throwing: PostgresError(.poolClosed, message: "the connection pool is shut down"))
        }
        let connections = idle
        open -= idle.count
        idle.removeAll()
        return connections
    }

    private func popWaiter() -> Waiter? {
        while !waitOrder.isEmpty {
            let id = waitOrder.removeFirst()
            if let waiter = waiters.removeValue(forKey: id) {
                waiter.timer.cancel()
                return waiter
            }
        }
        return nil
    }

    private func timeOut(waiter id: UInt64, after timeout: Duration) {
        guard waiters[id] != nil else { return }
        totalTimeouts += 1
        fail(waiter: id, with: PostgresError(.poolTimeout, message: "no database connection became free within \(timeout)"))
    }

    private func fail(waiter id: UInt64, with error: any Error) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timer.cancel()
        waiter.continuation.resume(throwing: error)
    }
}
