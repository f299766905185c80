import CZlib

/// gzip (RFC 1952) through zlib, for `Content-Encoding: gzip` request bodies: ink JSON shrinks
/// to about a third, which matters on a courier's mobile link.
///
/// Deterministic for the same input and zlib build, and the SDK compresses a queued proof once and
/// stores the compressed bytes, so every retry sends the very bytes the server's Idempotency-Key
/// record fingerprints.
public enum Gzip {
    /// The gzip stream of `bytes`. The `z_stream` lives and dies inside this call.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) throws(CountersignClientError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        let initialised = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                        ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initialised == Z_OK else { throw .encoding("zlib deflateInit2 failed (\(initialised))") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        var input = bytes
        let result: Int32 = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                // deflateBound guarantees room for everything in one Z_FINISH.
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { throw .encoding("zlib deflate did not finish (\(result))") }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }
}
