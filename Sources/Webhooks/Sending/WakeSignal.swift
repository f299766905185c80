import Synchronization

/// Wakes the sender early: a notification (new work committed) ends its wait at once; a signal
/// raised while it was busy is kept, so work that arrived meanwhile is never slept through.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    /// Wakes the current or next wait.
    func raise() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when raised, after `timeout`, or when cancelled — whichever comes first.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.next() }
            await group.next()
            group.cancelAll()
            self.raise()  // ends `next()` if the timer won; the pending flag this may leave is harmless (one extra claim)
        }
        state.withLock { $0.pending = false }
    }

    private func next() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.raise()
        }
    }
}
