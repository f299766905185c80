import Synchronization

/// Bounds how many exports stream at once. An export holds one database connection (its
/// REPEATABLE READ snapshot) for as long as the client takes to download it, so without a bound a
/// few slow auditors could take the whole pool from uploads and reads.
final class ExportSlots: Sendable {
    /// A taken slot; it is given back when the last reference to it goes (the response body that
    /// holds it finished, failed, or was never started).
    final class Slot: Sendable {
        let owner: ExportSlots
        init(owner: ExportSlots) { self.owner = owner }
        deinit { owner.release() }
    }

    /// Exports allowed at once.
    let limit: Int
    private let running = Mutex(0)

    /// Creates slots for `limit` concurrent exports (at least one).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A slot, or `nil` when `limit` exports are already running.
    func acquire() -> Slot? {
        let taken = running.withLock { running in
            guard running < limit else { return false }
            running += 1
            return true
        }
        return taken ? Slot(owner: self) : nil
    }

    /// Exports running now.
    var inUse: Int { running.withLock { $0 } }

    private func release() {
        running.withLock { $0 -= 1 }
    }
}
