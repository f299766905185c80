import PNGShim

/// An error from PNG encoding or decoding, carrying libpng's own message when libpng failed.
public struct PNGError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The caller passed something unusable (sizes, buffer length, format for a colour).
        case invalidArgument
        /// Memory could not be allocated.
        case outOfMemory
        /// libpng reported an error; `message` is its text.
        case libpng
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "PNG error (\(code)): \(message)" }
}

/// An sRGB colour, 8 bits per channel.
public struct PNGColor: Sendable, Equatable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let black = PNGColor(red: 0, green: 0, blue: 0)
    public static let white = PNGColor(red: 255, green: 255, blue: 255)

    /// Whether the colour is a shade of grey (it can then be written as a grey image).
    public var isGray: Bool { red == green && green == blue }
}

/// What lies under the ink.
public enum PNGBackground: Sendable, Equatable {
    /// Alpha channel: pixels without ink are fully transparent (the default).
    case transparent
    /// Ink composited over opaque white; no alpha channel.
    case white
}

/// The PNG pixel layout.
public enum PNGPixelFormat: Sendable, Equatable {
    /// Chosen by measurement (see `BENCHMARKS.md`): on a transparent background an 8-bit
    /// palette of the ink colour with a 256-step tRNS alpha ramp (the coverage byte *is* the
    /// palette index, 1 byte/pixel); on white, 8-bit grey for a grey ink, else an opaque
    /// palette of the 256 ink-over-white blends.
    case automatic
    /// 8-bit palette indexed by coverage.
    case palette
    /// 8-bit grey + 8-bit alpha (transparent background, grey inks only).
    case grayAlpha
    /// 8-bit grey (white background, grey inks only).
    case gray
}

/// PNG scanline filter (one for every row, or libpng's adaptive choice).
public enum PNGFilter: Sendable, Equatable {
    case none, sub, up, average, paeth
    /// libpng's per-row heuristic over all five filters.
    case adaptive

    var mask: Int32 {
        switch self {
        case .none: 0x08
        case .sub: 0x10
        case .up: 0x20
        case .average: 0x40
        case .paeth: 0x80
        case .adaptive: 0xF8
        }
    }
}

/// zlib strategy.
public enum PNGCompressionStrategy: Int32, Sendable, Equatable {
    case `default` = 0, filtered = 1, huffmanOnly = 2, rle = 3, fixed = 4
}

/// What compresses the image data (PNG's IDAT); the raw value is its name in stored render
/// options and on the command line.
public enum PNGCompressor: String, Sendable, Equatable {
    /// Our run-length deflate: each repeat of the previous byte is a match at distance 1, as with
    /// zlib's `Z_RLE` strategy, without zlib's window and hash upkeep, in a fraction of its time
    /// on signature images (`BENCHMARKS.md`). Unfiltered rows only; libpng writes the chunks.
    case runLength = "run-length"
    /// zlib, driven by libpng, with the options' level, strategy, memLevel and windowBits.
    case zlib
}

/// Encoder settings. The defaults were chosen by measurement on real signatures
/// (see `BENCHMARKS.md`): no filter, the run-length compressor. The zlib settings apply with
/// ``PNGCompressor/zlib`` only; their defaults (level 6, RLE strategy, memLevel 6) were the
/// fastest zlib settings measured.
public struct PNGOptions: Sendable, Equatable {
    public var pixelFormat: PNGPixelFormat = .automatic
    public var filter: PNGFilter = .none
    /// What compresses the rows; ``PNGCompressor/runLength`` takes only ``PNGFilter/none``.
    public var compressor: PNGCompressor = .runLength
    /// zlib level 0...9.
    public var compressionLevel: Int = 6
    public var strategy: PNGCompressionStrategy = .rle
    /// zlib memLevel 1...9. 6 (not zlib's 8): with Z_RLE the hash table is never used but
    /// is still slid every 32 KiB; a smaller one cuts ~20% of deflate's instructions (measured).
    public var memoryLevel: Int = 6
    /// zlib windowBits 8...15.
    public var windowBits: Int = 15

    public init(
        pixelFormat: PNGPixelFormat = .automatic, filter: PNGFilter = .none, compressor: PNGCompressor = .runLength,
        compressionLevel: Int = 6, strategy: PNGCompressionStrategy = .rle, memoryLevel: Int = 6, windowBits: Int = 15
    ) {
        self.pixelFormat = pixelFormat
        self.filter = filter
        self.compressor = compressor
        self.compressionLevel = compressionLevel
        self.strategy = strategy
        self.memoryLevel = memoryLevel
        self.windowBits = windowBits
    }

    public static let `default` = PNGOptions()
}

/// Writes an 8-bit coverage (alpha) mask as a PNG of one ink colour, through libpng.
///
/// The output is byte-identical for identical input and options (no time or text chunks).
public enum PNGEncoder {
    /// Largest accepted width or height (libpng's default user limit is 1,000,000).
    public static let maxDimension = 1_000_000

    /// Encodes `alpha` (`width * height` bytes, row-major, 0 = no ink, 255 = full ink).
    public static func encode(
        alpha: [UInt8], width: Int, height: Int,
        color: PNGColor = .black, background: PNGBackground = .transparent,
        options: PNGOptions = .default
    ) throws(PNGError) -> [UInt8] {
        try checkSize(width: width, height: height)
        guard width.multipliedReportingOverflow(by: height) == (alpha.count, false) else {
            throw PNGError(
                code: .invalidArgument,
                message: "alpha has \(alpha.count) bytes, expected \(width)x\(height)")
        }
        let writer = try PNGRowWriter(width: width, height: height, color: color, background: background, options: options)
        try alpha.withUnsafeBufferPointer { (pixels) throws(PNGError) in try writer.write(contiguousRows: pixels) }
        return try writer.finish()
    }

    /// The shim's parameters for this image, with pointers valid only during `body`.
    static func withParameters<R>(
        width: Int, height: Int, color: PNGColor, background: PNGBackground, options: PNGOptions,
        _ body: (inout cs_png_params) -> R
    ) throws(PNGError) -> R {
        let format = try resolve(options.pixelFormat, color: color, background: background)
        var params = cs_png_params()
        params.width = UInt32(width)
        params.height = UInt32(height)
        params.filters = options.filter.mask
        params.compression_level = Int32(clamping: options.compressionLevel)
        params.compression_strategy = options.strategy.rawValue
        params.compression_mem_level = Int32(clamping: options.memoryLevel)
        params.compression_window_bits = Int32(clamping: options.windowBits)

        // Lookup tables from coverage to written samples; `nil` = identity.
        var lut0: [UInt8]? = nil
        var palette: [UInt8] = []
        var trns: [UInt8] = []
        switch (format, background) {
        case (.palette, .transparent):
            params.color_type = Int32(CS_PNG_PALETTE)
            palette = [UInt8](unsafeUninitializedCapacity: 768) { buf, n in
                for i in 0..<256 {
                    buf[3 * i] = color.red; buf[3 * i + 1] = color.green; buf[3 * i + 2] = color.blue
                }
                n = 768
            }
            // Index i has alpha i; entry 255 is opaque by default, so 255 entries suffice.
            trns = [UInt8](unsafeUninitializedCapacity: 255) { buf, n in
                for i in 0..<255 { buf[i] = UInt8(i) }
                n = 255
            }
        case (.palette, .white):
            params.color_type = Int32(CS_PNG_PALETTE)
            for i in 0..<256 {
                palette += [blend(color.red, i), blend(color.green, i), blend(color.blue, i)]
            }
        case (.grayAlpha, _):
            params.color_type = Int32(CS_PNG_GRAY_ALPHA)
            lut0 = [UInt8](repeating: color.red, count: 256)
        case (.gray, _):
            params.color_type = Int32(CS_PNG_GRAY)
            lut0 = (0..<256).map { blend(color.red, $0) }
        case (.automatic, _):
            preconditionFailure("resolved above")
        }
        return palette.withUnsafeBufferPointer { pal in
            trns.withUnsafeBufferPointer { tr in
                withOptionalPointer(lut0) { l0 in
                    params.palette_rgb = pal.baseAddress
                    params.palette_entries = Int32(pal.count / 3)
                    params.trns = tr.baseAddress
                    params.trns_entries = Int32(tr.count)
                    params.lut0 = l0
                    params.lut1 = nil  // grey+alpha: alpha = coverage
                    return body(&params)
                }
            }
        }
    }

    /// Checks a size as ``encode(alpha:width:height:color:background:options:)`` does.
    static func checkSize(width: Int, height: Int) throws(PNGError) {
        // Sizes beyond libpng's limit are passed through on purpose: libpng itself rejects
        // them, and its message is what the caller should see.
        guard width > 0, height > 0, width <= Int(UInt32.max), height <= Int(UInt32.max) else {
            throw PNGError(code: .invalidArgument, message: "image size \(width)x\(height) is not positive")
        }
    }

    static func resolve(
        _ format: PNGPixelFormat, color: PNGColor, background: PNGBackground
    ) throws(PNGError) -> PNGPixelFormat {
        switch (format, background) {
        case (.automatic, .transparent), (.palette, _):
            return .palette
        case (.automatic, .white):
            return color.isGray ? .gray : .palette
        case (.grayAlpha, .transparent), (.gray, .white):
            guard color.isGray else {
                throw PNGError(code: .invalidArgument, message: "\(format) needs a grey ink colour")
            }
            return format
        case (.grayAlpha, .white):
            throw PNGError(code: .invalidArgument, message: "grey+alpha is for a transparent background")
        case (.gray, .transparent):
            throw PNGError(code: .invalidArgument, message: "grey without alpha needs a white background")
        }
    }

    /// Ink of channel value `ink` at coverage `i`/255 over white, rounded.
    @inline(__always)
    static func blend(_ ink: UInt8, _ i: Int) -> UInt8 {
        UInt8(255 - ((255 - Int(ink)) * i + 127) / 255)
    }
}

/// Decodes PNG files through libpng's simplified API (used by tests and tools to read back
/// what was written, or to compare with other renderers).
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

/// The error code for a shim status.
func shimErrorCode(_ status: Int32) -> PNGError.Code {
    switch status {
    case Int32(CS_PNG_OUT_OF_MEMORY): .outOfMemory
    case Int32(CS_PNG_LIBPNG_ERROR): .libpng
    default: .invalidArgument
    }
}

/// The shim's NUL-terminated message as a string.
func shimMessage(_ message: [CChar]) -> String {
    let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

private func withOptionalPointer<R>(
    _ array: [UInt8]?, _ body: (UnsafePointer<UInt8>?) -> R
) -> R {
    guard let array else { return body(nil) }
    return array.withUnsafeBufferPointer { body($0.baseAddress) }
}
