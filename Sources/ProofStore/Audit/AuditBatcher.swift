import Postgres

/// Group commit for audit events that have no transaction of their own (reads of proof content).
///
/// Each commit of an event holds its chain's lock through a WAL flush (`synchronous_commit` stays
/// on), so one event per transaction caps reads at one fsync each. Here the first caller commits at
/// once; callers arriving meanwhile queue, and the next transaction appends all of them (up to
/// ``maxBatch``) with one commit, each chain they touch locked once (in ascending order). Every
/// caller still returns only after its own event is durable, and a failed batch fails each of its callers.
actor AuditBatcher {
    /// Most events in one transaction.
    static let maxBatch = 256

    private struct Waiter {
        var entry: AuditEntry
        var continuation: CheckedContinuation<AuditEvent, any Error>
    }

    private let database: PostgresClient
    private var queue: [Waiter] = []
    private var draining = false

    init(database: PostgresClient) {
        self.database = database
    }

    /// Appends `entry`; returns the committed event.
    func append(_ entry: AuditEntry) async throws -> AuditEvent {
        try await withCheckedThrowingContinuation { continuation in
            queue.append(Waiter(entry: entry, continuation: continuation))
            if !draining {
                draining = true
                Task { await drain() }
            }
        }
    }

    private func drain() async {
        while !queue.isEmpty {
            let batch = Array(queue.prefix(Self.maxBatch))
            queue.removeFirst(batch.count)
            let entries = batch.map(\.entry)
            do {
                let events = try await database.withTransaction(retryingStalePlans: true) { session in
                    try await AuditLog.append(entries, in: session)
                }
                for (waiter, event) in zip(batch, events) { waiter.continuation.resume(returning: event) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
        draining = false
    }
}
