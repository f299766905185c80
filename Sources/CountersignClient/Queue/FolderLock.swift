#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a file: one drainer per queue folder, across
/// processes. The kernel releases it when the descriptor closes, also when the process is
/// killed, so a crashed drain never blocks the next one.
final class FolderLock {
    /// The open lock file; -1 once released.
    private var descriptor: Int32

    /// Takes the lock without waiting; `nil` when another holder has it.
    init?(path: String) throws(CountersignClientError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DurableFile.failure("open", path) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let error = DurableFile.failure("flock", path)
            close(descriptor)
            if busy { return nil }
            throw error
        }
        self.descriptor = descriptor
    }

    /// Releases the lock (closing the descriptor releases it); a second call does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
