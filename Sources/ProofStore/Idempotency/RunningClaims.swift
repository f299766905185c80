import Foundation
import Synchronization

/// The idempotency keys this process's requests hold right now.
final class RunningClaims: Sendable {
    private let keys = Mutex<Set<String>>([])

    /// Adds the key; false when it was already held.
    func insert(_ apiKeyID: UUID, _ key: String) -> Bool {
        keys.withLock { $0.insert("\(apiKeyID)/\(key)").inserted }
    }

    func remove(_ apiKeyID: UUID, _ key: String) {
        _ = keys.withLock { $0.remove("\(apiKeyID)/\(key)") }
    }
}
