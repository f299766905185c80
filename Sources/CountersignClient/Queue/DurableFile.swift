#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes that survive a crash or power loss whole or not at all: a temporary file in the same
/// folder, written and `fsync`ed, `rename`d over the name (atomic within one file system), then
/// the folder `fsync`ed so the rename itself is on disk. A reader sees the old file or the new,
/// never a torn one; a crash leaves at most a `*.tmp` file, which ``ProofQueue`` ignores and
/// removes.
enum DurableFile {
    /// The suffix of files being written; never a queue item.
    static let temporarySuffix = ".tmp"

    /// Writes `bytes` to `folder/name` durably.
    static func write(_ bytes: [UInt8], to name: String, in folder: String) throws(CountersignClientError) {
        let final = folder + "/" + name
        let temporary = final + ".\(UInt64.random(in: 0...UInt64.max))" + temporarySuffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open", temporary) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                posixWrite(descriptor, raw.baseAddress! + written, raw.count - written)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure("write", temporary)
                close(descriptor)
                unlink(temporary)
                throw error
            }
            written += n
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("fsync", temporary)
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0 else {
            unlink(temporary)
            throw failure("close", temporary)
        }
        guard rename(temporary, final) == 0 else {
            let error = failure("rename", final)
            unlink(temporary)
            throw error
        }
        try syncFolder(folder)
    }

    /// Removes `folder/name` durably (the item is gone after a crash too). A missing file is fine:
    /// another drain removed it.
    static func remove(_ name: String, in folder: String) throws(CountersignClientError) {
        let path = folder + "/" + name
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("unlink", path) }
        try syncFolder(folder)
    }

    /// Moves `name` from one folder to another on the same file system, durably in both.
    static func move(_ name: String, from source: String, to destination: String) throws(CountersignClientError) {
        guard rename(source + "/" + name, destination + "/" + name) == 0 else { throw failure("rename", source + "/" + name) }
        try syncFolder(destination)
        try syncFolder(source)
    }

    /// `fsync` on the folder: makes its entries (creations, renames, removals) durable.
    static func syncFolder(_ folder: String) throws(CountersignClientError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", folder) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("fsync", folder) }
    }

    /// The whole file, or `nil` when it does not exist.
    static func read(_ path: String) throws(CountersignClientError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw failure("open", path)
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { posixRead(descriptor, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw failure("read", path) }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// The C error as a typed one, naming the call and the path.
    static func failure(_ call: String, _ path: String) -> CountersignClientError {
        .storage("\(call) \(path): \(String(cString: strerror(errno)))")
    }
}

// `write` and `read` are shadowed inside `DurableFile` by its own methods.
@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always) private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
