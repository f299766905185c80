import CZlib
import Synchronization

/// One zlib raw-deflate stream (level 1, as every bundle has used), kept and reset between
/// entries rather than set up and torn down for each: `deflateInit2` allocates about 270 KB of
/// state, which glibc maps fresh and the kernel zero-fills page by page, for entries of a few
/// kilobytes — a fifth of an export's CPU went to that and to zlib's own setup
/// (docs/decisions/0028-export-and-verify-throughput.md). `deflateReset` gives exactly the state
/// a fresh `deflateInit2` gives, so the bytes are the same. The one owner of its `z_stream`:
/// ended in `deinit`. Unchecked-sendable because the pool hands each one to one thread at a time
/// (``withDeflater(_:)``): it is never used by two at once.
final class ZipDeflater: @unchecked Sendable {
    private var stream = z_stream()
    private let ready: Bool

    init() {
        ready = deflateInit2_(&stream, 1, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                              Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if ready { deflateEnd(&stream) }
    }

    /// `contents` as a raw deflate stream, or nil if zlib fails.
    func deflate(_ contents: [UInt8]) -> [UInt8]? {
        guard ready, deflateReset(&stream) == Z_OK else { return nil }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(contents.count))))
        let status: Int32 = contents.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                defer {
                    // Nothing of the caller's buffers may outlive this call inside the stream.
                    stream.next_in = nil
                    stream.next_out = nil
                }
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// Idle deflaters, shared by every thread that prepares entries: at most one per thread at
    /// a time is taken, so the pool holds about as many as there are cores.
    private static let idle = Mutex<[ZipDeflater]>([])

    /// Runs `body` with a deflater no other thread is using.
    static func withDeflater<T>(_ body: (ZipDeflater) -> T) -> T {
        let deflater = idle.withLock { $0.popLast() } ?? ZipDeflater()
        defer { idle.withLock { if $0.count < 16 { $0.append(deflater) } } }
        return body(deflater)
    }
}
