import CZlib

/// Inflates gzip request bodies with a hard bound on the output, so a "zip bomb" (a few KB that
/// inflate to gigabytes) is refused after at most `limit` bytes of work.
public enum GzipInflater {
    /// Why inflating failed.
    public enum Failure: Error, Sendable, Equatable {
        /// The inflated data would exceed the limit.
        case tooLarge(limit: Int)
        /// The bytes are not valid gzip (or are truncated).
        case invalid(String)
    }

    /// The inflated bytes of the gzip stream `input` (concatenated members are accepted); with
    /// `raw`, of a bare deflate stream without header or trailer (a ZIP entry's data).
    public static func inflate(_ input: [UInt8], limit: Int, raw: Bool = false) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // 16 + MAX_WBITS: expect a gzip header and trailer; -MAX_WBITS: none.
        guard inflateInit2_(&stream, raw ? -MAX_WBITS : 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .invalid("zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(4096, input.count * 4)))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var result: Result<Void, Failure> = .success(())
        input.withUnsafeBufferPointer { source in
            chunk.withUnsafeMutableBufferPointer { buffer in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                while true {
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    let produced = buffer.count - Int(stream.avail_out)
                    if output.count + produced > limit {
                        result = .failure(.tooLarge(limit: limit))
                        return
                    }
                    output.append(contentsOf: buffer[0..<produced])
                    switch status {
                    case Z_STREAM_END:
                        if stream.avail_in == 0 { return }
                        // Another gzip member follows: reset and continue.
                        if inflateReset(&stream) != Z_OK {
                            result = .failure(.invalid("corrupt gzip member boundary"))
                            return
                        }
                    case Z_OK:
                        continue
                    case Z_BUF_ERROR where stream.avail_in == 0:
                        result = .failure(.invalid("the gzip stream is truncated"))
                        return
                    default:
                        let message = stream.msg.map { String(cString: $0) } ?? "inflate failed (\(status))"
                        result = .failure(.invalid(message))
                        return
                    }
                }
            }
        }
        try result.get()
        return output
    }
}
