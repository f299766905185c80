import PNG
import PNGShim

/// Decodes PNG files through libpng's simplified API, so tests (and the render fuzzer's oracle)
/// can read back what was written or compare it with other renderers. The server never decodes
/// a PNG, so this lives beside the tests rather than in the shipped `PNG` module.
public enum PNGDecoder {
    /// A decoded image: 8-bit RGBA, not premultiplied, row-major.
    public struct Image: Sendable, Equatable {
        public let width: Int
        public let height: Int
        public let rgba: [UInt8]

        /// The alpha channel alone.
        public var alpha: [UInt8] {
            var a = [UInt8](repeating: 0, count: width * height)
            for i in a.indices { a[i] = rgba[4 * i + 3] }
            return a
        }
    }

    public static func decodeRGBA(_ png: [UInt8], maxPixels: Int = 1 << 26) throws(PNGError) -> Image {
        var message = [CChar](repeating: 0, count: 256)
        var out: UnsafeMutablePointer<UInt8>? = nil
        var w: UInt32 = 0, h: UInt32 = 0
        let status = png.withUnsafeBufferPointer { data in
            message.withUnsafeMutableBufferPointer { msg in
                cs_png_decode_rgba(
                    data.baseAddress, data.count, UInt64(max(0, maxPixels)), &out, &w, &h,
                    msg.baseAddress, msg.count)
            }
        }
        guard status == Int32(CS_PNG_OK), let out else {
            throw PNGError(code: shimErrorCode(status), message: shimMessage(message))
        }
        defer { cs_png_free(out) }
        let count = Int(w) * Int(h) * 4
        return Image(width: Int(w), height: Int(h), rgba: [UInt8](UnsafeBufferPointer(start: out, count: count)))
    }

    /// The libpng version in use.
    public static var libpngVersion: String { String(cString: cs_png_libpng_version()) }
}
