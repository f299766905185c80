import PNGShim

/// Writes a PNG row by row, for producers that have the image in bands (the rasteriser):
/// the same file as ``PNGEncoder/encode(alpha:width:height:color:background:options:)`` gives for
/// the same rows and settings, without the whole coverage mask in memory at once.
///
/// With ``PNGCompressor/runLength`` the rows are converted and compressed here as they come and
/// libpng writes the file's chunks in ``finish()``; with ``PNGCompressor/zlib`` each row goes to
/// libpng at once. libpng's error longjmps stay inside the C shim (each call sets its own
/// `setjmp`); after a failure every later call throws. Everything is released with the object.
public final class PNGRowWriter {
    /// Image width in pixels (bytes per row passed in).
    public let width: Int
    /// Image height in pixels (rows to pass in before ``finish()``).
    public let height: Int
    /// The shim's libpng writer: fed row by row with zlib, or the compressed data at the end.
    private let libpngWriter: OpaquePointer
    /// The run-length compressor (nil with zlib), fed each row's filter byte and samples.
    private var deflater: RunLengthDeflater?
    private let conversion: RowConversion
    private var convertedRow: [UInt8]
    private var rowsWritten = 0
    private var finished = false

    /// How a coverage byte becomes the samples written for it.
    private enum RowConversion {
        /// The coverage byte is the sample (palette index).
        case none
        /// One grey sample through a table.
        case gray([UInt8])
        /// A constant grey, then the coverage as alpha.
        case grayAlpha(UInt8)
    }

    /// Starts a PNG of `width` × `height` coverage bytes (0 = no ink, 255 = full ink); libpng
    /// writes the header chunks here, so it refuses what it cannot write before any row.
    public init(
        width: Int, height: Int, color: PNGColor = .black, background: PNGBackground = .transparent,
        options: PNGOptions = .default
    ) throws(PNGError) {
        try PNGEncoder.checkSize(width: width, height: height)
        if options.compressor == .runLength && options.filter != .none {
            throw PNGError(code: .invalidArgument,
                           message: "the run-length compressor writes unfiltered rows; use the zlib compressor for filters")
        }
        // Resolved before libpng's writer exists, so nothing can throw once it does.
        let format = try PNGEncoder.resolve(options.pixelFormat, color: color, background: background)
        var message = [CChar](repeating: 0, count: 256)
        var w: OpaquePointer? = nil
        let status = try PNGEncoder.withParameters(
            width: width, height: height, color: color, background: background, options: options
        ) { params in
            message.withUnsafeMutableBufferPointer { msg in
                cs_png_writer_begin(&params, &w, msg.baseAddress, msg.count)
            }
        }
        guard status == Int32(CS_PNG_OK), let w else {
            throw PNGError(code: shimErrorCode(status), message: shimMessage(message))
        }
        self.width = width
        self.height = height
        self.libpngWriter = w
        switch (options.compressor, format) {
        case (.zlib, _), (.runLength, .palette), (.runLength, .automatic):
            conversion = .none
            convertedRow = []
        case (.runLength, .gray):
            conversion = .gray((0..<256).map { PNGEncoder.blend(color.red, $0) })
            convertedRow = [UInt8](repeating: 0, count: width)
        case (.runLength, .grayAlpha):
            conversion = .grayAlpha(color.red)
            convertedRow = [UInt8](repeating: 0, count: 2 * width)
        }
        if options.compressor == .runLength {
            let samples = if case .grayAlpha = conversion { 2 * width } else { width }
            let (bytes, overflow) = (samples + 1).multipliedReportingOverflow(by: height)
            deflater = RunLengthDeflater(expectedSize: overflow ? 0 : bytes)
        }
    }

    deinit { cs_png_writer_free(libpngWriter) }

    /// Writes the next rows, each pointing at `width` coverage bytes.
    public func write(rows: UnsafeBufferPointer<UnsafePointer<UInt8>>) throws(PNGError) {
        guard let base = rows.baseAddress, !rows.isEmpty else { return }
        guard let deflater else {
            let pointers = UnsafeRawPointer(base).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            let status = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { msg in
                msg[0] = 0
                let status = cs_png_writer_rows(libpngWriter, pointers, UInt32(clamping: rows.count), msg.baseAddress, msg.count)
                return status == Int32(CS_PNG_OK) ? nil : (status, shimMessage(Array(msg)))
            }
            if let (status, message) = status { throw PNGError(code: shimErrorCode(status), message: message) }
            return
        }
        try checkRows(rows.count)
        for row in rows { compress(row, into: deflater) }
    }

    /// Writes `pixels.count / width` rows stored one after another.
    func write(contiguousRows pixels: UnsafeBufferPointer<UInt8>) throws(PNGError) {
        guard let base = pixels.baseAddress else { return }
        let count = pixels.count / width
        guard let deflater else {
            let rows = (0..<count).map { UnsafePointer(base + $0 * width) }
            try rows.withUnsafeBufferPointer { (rows) throws(PNGError) in try write(rows: rows) }
            return
        }
        try checkRows(count)
        for index in 0..<count { compress(base + index * width, into: deflater) }
    }

    /// Finishes the file after all `height` rows and returns it.
    public func finish() throws(PNGError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        var outSize = 0
        var message = [CChar](repeating: 0, count: 256)
        let status: Int32
        if let deflater {
            guard !finished else { throw PNGError(code: .invalidArgument, message: "the PNG was already finished") }
            guard rowsWritten == height else {
                throw PNGError(code: .invalidArgument, message: "fewer rows written than the image height")
            }
            finished = true
            let idat = deflater.finish()
            status = idat.withUnsafeBufferPointer { idat in
                message.withUnsafeMutableBufferPointer { msg in
                    cs_png_writer_finish_compressed(libpngWriter, idat.baseAddress, idat.count, &out, &outSize, msg.baseAddress, msg.count)
                }
            }
        } else {
            status = message.withUnsafeMutableBufferPointer { msg in
                cs_png_writer_finish(libpngWriter, &out, &outSize, msg.baseAddress, msg.count)
            }
        }
        guard status == Int32(CS_PNG_OK), let out else {
            throw PNGError(code: shimErrorCode(status), message: shimMessage(message))
        }
        defer { cs_png_free(out) }
        return [UInt8](UnsafeBufferPointer(start: out, count: outSize))
    }

    private func checkRows(_ count: Int) throws(PNGError) {
        guard !finished else { throw PNGError(code: .invalidArgument, message: "the PNG was already finished") }
        guard count <= height - rowsWritten else {
            throw PNGError(code: .invalidArgument, message: "more rows than the image height")
        }
        rowsWritten += count
    }

    /// Filter byte 0 (none), then the row's samples, into `deflater` (passed in once per batch of
    /// rows: reading the optional property for each call retained and released it every time,
    /// which showed in profiles under upload load).
    private func compress(_ row: UnsafePointer<UInt8>, into deflater: RunLengthDeflater) {
        deflater.append(0)
        switch conversion {
        case .none:
            deflater.append(UnsafeBufferPointer(start: row, count: width))
        case .gray(let table):
            for x in 0..<width { convertedRow[x] = table[Int(row[x])] }
            convertedRow.withUnsafeBufferPointer { deflater.append($0) }
        case .grayAlpha(let gray):
            for x in 0..<width {
                convertedRow[2 * x] = gray
                convertedRow[2 * x + 1] = row[x]
            }
            convertedRow.withUnsafeBufferPointer { deflater.append($0) }
        }
    }
}
