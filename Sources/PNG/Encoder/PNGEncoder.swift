import PNGShim

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

private func withOptionalPointer<R>(
    _ array: [UInt8]?, _ body: (UnsafePointer<UInt8>?) -> R
) -> R {
    guard let array else { return body(nil) }
    return array.withUnsafeBufferPointer { body($0.baseAddress) }
}
