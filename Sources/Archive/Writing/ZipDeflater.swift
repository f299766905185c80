import CLibISAL
import Synchronization

/// One ISA-L (igzip) level-1 compressor, kept between entries: an export deflates a few hundred
/// thousand files of a few kilobytes each, whole, and igzip's stateless level 1 compresses them
/// in about two thirds of libdeflate's time at the same size
/// (docs/decisions/0034-isa-l-deflates-bundle-entries.md). The one owner of its stream and level
/// buffer: freed in `deinit`. Unchecked-sendable because the pool hands each one to one thread
/// at a time (``withDeflater(_:)``): it is never used by two at once.
final class ZipDeflater: @unchecked Sendable {
    private let stream: UnsafeMutablePointer<isal_zstream>
    private let levelBuffer: UnsafeMutableRawBufferPointer

    init() {
        // Zeroed once: `isal_deflate_stateless_init` leaves some fields (`hist_bits`) as found,
        // and a field left to chance would make the output depend on it.
        stream = .allocate(capacity: 1)
        stream.initialize(to: isal_zstream())
        levelBuffer = .allocate(byteCount: countersign_isal_level1_buffer_size(), alignment: 64)
        levelBuffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        stream.deinitialize(count: 1)
        stream.deallocate()
        levelBuffer.deallocate()
    }

    /// `contents` as a raw deflate stream when it is shorter than `contents`; nil otherwise (the
    /// entry is then stored), including when igzip fails.
    func deflate(_ contents: [UInt8]) -> [UInt8]? {
        guard !contents.isEmpty, contents.count <= Int(UInt32.max) else { return nil }
        var succeeded = false
        // Room for exactly as many bytes as the input: a longer stream would be stored anyway,
        // and igzip reports the overflow instead of writing past the buffer.
        let output = [UInt8](unsafeUninitializedCapacity: contents.count) { target, initialized in
            initialized = 0
            contents.withUnsafeBufferPointer { source in
                isal_deflate_stateless_init(stream)
                stream.pointee.level = 1
                stream.pointee.level_buf = levelBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                stream.pointee.level_buf_size = UInt32(levelBuffer.count)
                stream.pointee.gzip_flag = UInt16(IGZIP_DEFLATE)
                stream.pointee.end_of_stream = 1
                stream.pointee.flush = UInt16(NO_FLUSH)
                stream.pointee.hist_bits = 0  // the default window, 32 KiB
                // igzip only reads the input; its field is not declared const.
                stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress!)
                stream.pointee.avail_in = UInt32(source.count)
                stream.pointee.next_out = target.baseAddress!
                stream.pointee.avail_out = UInt32(target.count)
                guard isal_deflate_stateless(stream) == COMP_OK, stream.pointee.avail_in == 0 else { return }
                initialized = Int(stream.pointee.total_out)
                succeeded = true
            }
        }
        return succeeded && !output.isEmpty ? output : nil
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
