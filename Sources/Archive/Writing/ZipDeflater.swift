import CLibDeflate
import Synchronization

/// One libdeflate compressor at level 1, kept between entries: an export deflates a few hundred
/// thousand files of a few kilobytes each, whole, and libdeflate compresses a whole buffer in
/// about half of zlib's time, a little smaller
/// (docs/decisions/0031-libdeflate-for-bundle-entries.md). The one owner of its compressor:
/// freed in `deinit`. Unchecked-sendable because the pool hands each one to one thread at a time
/// (``withDeflater(_:)``): it is never used by two at once.
final class ZipDeflater: @unchecked Sendable {
    private let compressor: OpaquePointer?

    init() {
        compressor = libdeflate_alloc_compressor(1)
    }

    deinit {
        if let compressor { libdeflate_free_compressor(compressor) }
    }

    /// `contents` as a raw deflate stream, or nil if libdeflate failed (the entry is then stored).
    func deflate(_ contents: [UInt8]) -> [UInt8]? {
        guard let compressor else { return nil }
        let bound = libdeflate_deflate_compress_bound(compressor, contents.count)
        let output = [UInt8](unsafeUninitializedCapacity: bound) { target, initialized in
            initialized = contents.withUnsafeBytes { source in
                libdeflate_deflate_compress(compressor, source.baseAddress, source.count, target.baseAddress, target.count)
            }
        }
        // 0 means the output did not fit, which the bound rules out; never an empty stream.
        return output.isEmpty ? nil : output
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
