import CZlib
import Synchronization

/// One zlib raw-inflate stream, reset between entries (``ZipArchiveReader/contents(of:limit:)``):
/// a verifier reads a few hundred thousand small deflated entries, and setting up a stream, a
/// 64 KiB chunk and a growing output for each cost more than some entries' inflating
/// (docs/decisions/0028-export-and-verify-throughput.md). The output is one buffer of the entry's
/// declared size, filled in one call. The one owner of its `z_stream`: ended in `deinit`.
/// Unchecked-sendable because the pool hands each one to one thread at a time.
final class ZipInflater: @unchecked Sendable {
    private var stream = z_stream()
    private let ready: Bool

    init() {
        ready = inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if ready { inflateEnd(&stream) }
    }

    /// The raw deflate stream `input`, which must inflate to exactly `size` bytes and end there.
    func inflate(_ input: ArraySlice<UInt8>, size: Int) throws(ZipArchiveReader.Failure) -> [UInt8] {
        guard ready, inflateReset(&stream) == Z_OK else { throw ZipArchiveReader.Failure(message: "zlib could not be initialised") }
        // Deflate expands at most ~1032:1: a declared size beyond that cannot be met, so a hostile
        // directory entry cannot make this allocate more than its data could fill.
        guard size <= input.count * 1032 + 1024 else {
            throw ZipArchiveReader.Failure(message: "the compressed data is damaged (declared size \(size) out of reach)")
        }
        var status: Int32 = Z_OK
        var produced = 0
        // One byte more than declared: filling it means the data is longer than the directory says.
        let output = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, initialized in
            input.withUnsafeBufferPointer { source in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(buffer.count)
                status = CZlib.inflate(&stream, Z_FINISH)
                produced = buffer.count - Int(stream.avail_out)
                stream.next_in = nil
                stream.next_out = nil
            }
            initialized = produced
        }
        guard status == Z_STREAM_END, produced == size else {
            let message = status == Z_STREAM_END || status == Z_BUF_ERROR ? "its size is not the declared \(size) bytes"
                : stream.msg.map { String(cString: $0) } ?? "inflate failed (\(status))"
            throw ZipArchiveReader.Failure(message: "the compressed data is damaged (\(message))")
        }
        return output
    }

    /// Idle inflaters, shared by the threads reading entries.
    private static let idle = Mutex<[ZipInflater]>([])

    /// Runs `body` with an inflater no other thread is using.
    static func withInflater<T>(_ body: (ZipInflater) throws(ZipArchiveReader.Failure) -> T) throws(ZipArchiveReader.Failure) -> T {
        let inflater = idle.withLock { $0.popLast() } ?? ZipInflater()
        defer { idle.withLock { if $0.count < 16 { $0.append(inflater) } } }
        return try body(inflater)
    }
}
