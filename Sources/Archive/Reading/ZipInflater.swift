import CLibDeflate
import Synchronization

/// One libdeflate decompressor, kept between entries (``ZipArchiveReader/contents(of:limit:)``):
/// a verifier reads a few hundred thousand small deflated entries, each whole into one buffer of
/// its declared size, which is libdeflate's way and a quarter faster than zlib's inflate here
/// (docs/decisions/0031-libdeflate-for-bundle-entries.md). The one owner of its decompressor:
/// freed in `deinit`. Unchecked-sendable because the pool hands each one to one thread at a time.
final class ZipInflater: @unchecked Sendable {
    private let decompressor: OpaquePointer?

    init() {
        decompressor = libdeflate_alloc_decompressor()
    }

    deinit {
        if let decompressor { libdeflate_free_decompressor(decompressor) }
    }

    /// The raw deflate stream `input`, which must inflate to exactly `size` bytes, end there and
    /// use every input byte.
    func inflate(_ input: ArraySlice<UInt8>, size: Int) throws(ZipArchiveReader.Failure) -> [UInt8] {
        guard let decompressor else { throw ZipArchiveReader.Failure(message: "libdeflate could not be initialised") }
        // Deflate expands at most ~1032:1: a declared size beyond that cannot be met, so a hostile
        // directory entry cannot make this allocate more than its data could fill.
        guard size <= input.count * 1032 + 1024 else {
            throw ZipArchiveReader.Failure(message: "the compressed data is damaged (declared size \(size) out of reach)")
        }
        var status = LIBDEFLATE_SUCCESS
        var consumed = 0
        var produced = 0
        // One byte more than declared: filling it means the data is longer than the directory says.
        let output = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, initialized in
            input.withUnsafeBytes { source in
                status = libdeflate_deflate_decompress_ex(decompressor, source.baseAddress, source.count, buffer.baseAddress,
                                                          buffer.count, &consumed, &produced)
            }
            initialized = status == LIBDEFLATE_SUCCESS ? produced : 0
        }
        guard status == LIBDEFLATE_SUCCESS, produced == size, consumed == input.count else {
            let message = switch status {
            case LIBDEFLATE_SUCCESS: produced == size ? "data follows the end of the stream" : "its size is not the declared \(size) bytes"
            case LIBDEFLATE_INSUFFICIENT_SPACE: "its size is not the declared \(size) bytes"
            default: "not a valid deflate stream"
            }
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
