#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's scheduling priority. Linux gives every thread its own nice value
/// (`setpriority(PRIO_PROCESS, 0, …)` changes the calling thread only, see setpriority(2)),
/// which is what lets heavy jobs run below everything else in the process without a process of
/// their own.
enum ThreadPriority {
    /// Lowers the calling thread's priority to `niceness` if it is higher (a thread can lower its
    /// own priority without privileges, never raise it back, so the heavy pool's threads stay low).
    /// Best effort: where it is not supported the job simply runs at normal priority.
    static func lower(to niceness: Int32) {
        #if os(Linux)
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        guard errno == 0, current < niceness else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }

    /// The calling thread's nice value, or nil where it cannot be read (for tests).
    static func current() -> Int32? {
        #if os(Linux)
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return errno == 0 ? value : nil
        #else
        return nil
        #endif
    }
}
