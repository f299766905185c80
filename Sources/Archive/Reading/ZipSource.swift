#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where ``ZipArchiveReader`` reads an archive from: random access by offset, so a bundle of any
/// size is read in bounded buffers instead of being loaded whole.
public protocol ZipSource: Sendable {
    /// The archive's length in bytes.
    var size: UInt64 { get }
    /// Exactly `count` bytes from `offset` (the reader checks bounds first).
    func read(at offset: UInt64, count: Int) throws(ZipArchiveReader.Failure) -> [UInt8]
}

/// An archive already in memory.
public struct ZipBytes: ZipSource {
    public let bytes: [UInt8]
    public var size: UInt64 { UInt64(bytes.count) }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public func read(at offset: UInt64, count: Int) throws(ZipArchiveReader.Failure) -> [UInt8] {
        guard offset <= size, UInt64(count) <= size - offset else { throw ZipArchiveReader.Failure(message: "read past the end") }
        return Array(bytes[Int(offset)..<Int(offset) + count])
    }
}

/// An archive in a file, read with `pread` (safe from several threads). The one owner of its
/// descriptor: closed in `deinit`.
public final class ZipFile: ZipSource {
    private let descriptor: Int32
    public let size: UInt64

    /// Opens `path` read-only.
    public init(path: String) throws(ZipArchiveReader.Failure) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ZipArchiveReader.Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG) else {
            close(descriptor)
            throw ZipArchiveReader.Failure(message: "\(path) is not a regular file")
        }
        self.descriptor = descriptor
        self.size = UInt64(status.st_size)
    }

    deinit { close(descriptor) }

    public func read(at offset: UInt64, count: Int) throws(ZipArchiveReader.Failure) -> [UInt8] {
        guard offset <= size, UInt64(count) <= size - offset else { throw ZipArchiveReader.Failure(message: "read past the end") }
        // Uninitialised: every byte is read over, and zeroing them first showed in the verifier's profile.
        var failedAt: UInt64?
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let result = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if result < 0, errno == EINTR { continue }
                guard result > 0 else {
                    failedAt = offset + UInt64(done)
                    break
                }
                done += result
            }
            initialized = failedAt == nil ? count : 0
        }
        if let failedAt { throw ZipArchiveReader.Failure(message: "read failed at offset \(failedAt)") }
        return out
    }
}
