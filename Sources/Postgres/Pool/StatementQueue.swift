import Synchronization

/// A statement waiting to be sent, and what to check in its result.
struct QueuedStatement: Sendable {
    var statement: PostgresStatement
    var check: (@Sendable (PostgresResult) throws -> Void)?
}

/// The statements a session has queued. A session is used by one task at a time; the lock only
/// makes that safe to state to the compiler.
final class StatementQueue: Sendable {
    private let items = Mutex<[QueuedStatement]>([])

    func append(_ item: QueuedStatement) {
        items.withLock { $0.append(item) }
    }

    func takeAll() -> [QueuedStatement] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
