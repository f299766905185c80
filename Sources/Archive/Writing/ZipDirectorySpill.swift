#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where ``ZipArchiveWriter`` keeps the central directory until ``ZipArchiveWriter/finish(into:)``:
/// an anonymous temporary file (unlinked as soon as it is opened, so nothing is left behind even
/// if the process dies), written through a 256 KiB buffer. A bundle of a million files has a
/// central directory of about 100 MB; held in memory it grew the exporter by that much.
/// The one owner of its file descriptor: closed in `deinit`.
final class ZipDirectorySpill {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Bytes appended so far.
    private(set) var size: UInt64 = 0
    static let bufferSize = 256 * 1024

    /// A new empty spill file in `TMPDIR` (or /tmp).
    init() throws(ZipWriteError) {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/countersign-zip-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw .temporaryFile(errno: errno) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        self.descriptor = descriptor
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit { close(descriptor) }

    /// Appends `bytes` (buffered).
    func append(_ bytes: [UInt8]) throws(ZipWriteError) {
        buffer.append(contentsOf: bytes)
        size += UInt64(bytes.count)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes the buffer out.
    func flush() throws(ZipWriteError) {
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .spill(errno: errno)
            }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Up to `count` bytes from `offset` (after ``flush()``).
    func read(at offset: UInt64, count: Int) throws(ZipWriteError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = out.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .spill(errno: errno)
            }
            if result == 0 { break }
            done += result
        }
        out.removeLast(count - done)
        return out
    }
}

/// Why a ZIP archive could not be written.
public enum ZipWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The central directory's temporary file could not be made.
    case temporaryFile(errno: Int32)
    /// Writing or reading it back failed (a full disk, an I/O error).
    case spill(errno: Int32)

    public var description: String {
        switch self {
        case .temporaryFile(let code): "cannot create the ZIP writer's temporary file: \(String(cString: strerror(code)))"
        case .spill(let code): "the ZIP writer's temporary file failed: \(String(cString: strerror(code)))"
        }
    }
}
