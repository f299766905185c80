import Foundation
import Execution

#if canImport(Glibc)
import Glibc
#endif

/// The append-only witness directory (`CHECKPOINT_WITNESS_DIR`): one file per checkpoint, never
/// overwritten, meant to live where the database's administrators cannot rewrite it (another
/// host's mount, a WORM bucket synced from it, a backup that keeps versions).
///
/// A file appears whole or not at all: the bytes go to a temporary file in the same directory,
/// which is fsynced, then hard-linked to its final name (`link` fails when the name exists, so an
/// existing witness is never replaced, unlike `rename`), the temporary name removed and the
/// directory fsynced so the new entry survives a crash. The calls block, so they run on NIO's
/// blocking thread pool, never on the cooperative pool.
public struct WitnessDirectory: Sendable {
    /// The directory.
    public let path: String

    /// A witness directory at `path` (created, mode 0750, when missing).
    public init(path: String) {
        self.path = path
    }

    /// Writes `bytes` as `name` (see the type's description); fails with
    /// ``WitnessError/alreadyWitnessed(path:)`` when the name exists.
    public func write(_ bytes: [UInt8], as name: String) async throws {
        let path = self.path
        try await BlockingLane.waiting.run { try Self.writeBlocking(bytes, as: name, in: path) }
    }

    /// Every checkpoint file's name in the directory, ascending (that is, by signing time).
    public func checkpointNames() throws(WitnessError) -> [String] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw WitnessError.io(operation: "list", path: path, errno: ENOENT)
        }
        return names.filter(WitnessFile.isCheckpointName).sorted()
    }

    /// The bytes of `name` in the directory, or `nil` when there is no such file.
    public func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + name).map(Array.init)
    }

    /// Every checkpoint file, parsed, by signing time; a malformed one throws.
    public func files() throws(WitnessError) -> [WitnessFile] {
        var files: [WitnessFile] = []
        for name in try checkpointNames() {
            guard let bytes = read(name) else { throw WitnessError.io(operation: "read", path: path + "/" + name, errno: EIO) }
            files.append(try WitnessFile(name: name, bytes: bytes))
        }
        return files
    }

    static func writeBlocking(_ bytes: [UInt8], as name: String, in directory: String) throws(WitnessError) {
        guard !name.contains("/"), !name.hasPrefix(".") else { throw WitnessError.malformed(file: name, reason: "not a plain file name") }
        if mkdir(directory, 0o750) != 0, errno != EEXIST { throw WitnessError.io(operation: "mkdir", path: directory, errno: errno) }
        let final = directory + "/" + name
        let temporary = directory + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o440)
        guard fd >= 0 else { throw WitnessError.io(operation: "open", path: temporary, errno: errno) }
        defer { unlink(temporary) }
        do {
            defer { close(fd) }
            try writeAll(bytes, to: fd, path: temporary)
            guard fsync(fd) == 0 else { throw WitnessError.io(operation: "fsync", path: temporary, errno: errno) }
        }
        guard link(temporary, final) == 0 else {
            throw errno == EEXIST ? WitnessError.alreadyWitnessed(path: final) : WitnessError.io(operation: "link", path: final, errno: errno)
        }
        try fsyncDirectory(directory)
    }

    static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(WitnessError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw WitnessError.io(operation: "write", path: path, errno: errno)
            }
            offset += written
        }
    }

    static func fsyncDirectory(_ directory: String) throws(WitnessError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw WitnessError.io(operation: "open", path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw WitnessError.io(operation: "fsync", path: directory, errno: errno) }
    }
}
