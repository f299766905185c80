import Testing
import PNG
import PNGTestSupport

/// A test image: a horizontal ramp through every coverage value, plus runs of 0 and 255.
private func sampleAlpha(width: Int, height: Int) -> [UInt8] {
    var a = [UInt8](repeating: 0, count: width * height)
    for y in 0..<height {
        for x in 0..<width {
            let v: Int
            switch y % 4 {
            case 0: v = (x * 7 + y) & 255
            case 1: v = x < width / 2 ? 0 : 255
            case 2: v = (x * 255) / max(1, width - 1)
            default: v = (x / 3 + y * 5) % 256
            }
            a[y * width + x] = UInt8(v)
        }
    }
    return a
}

/// The chunk types of a PNG file, in order.
private func chunkTypes(_ png: [UInt8]) -> [String] {
    var types: [String] = []
    var i = 8
    while i + 8 <= png.count {
        let len = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
        types.append(String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self))
        i += 12 + len
    }
    return types
}

@Suite struct PNGTests {
    let width = 301, height = 67

    @Test func transparentPaletteRoundTripsExactly() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let ink = PNGColor(red: 12, green: 34, blue: 200)
        let png = try PNGEncoder.encode(alpha: alpha, width: width, height: height, color: ink)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(png[25] == 3, "colour type should be palette")
        let types = chunkTypes(png)
        #expect(types.first == "IHDR" && types.last == "IEND")
        #expect(Set(types) == ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"], "no time or text chunks: \(types)")
        let img = try PNGDecoder.decodeRGBA(png)
        #expect(img.width == width && img.height == height)
        #expect(img.alpha == alpha)
        for i in 0..<(width * height) where alpha[i] > 0 {
            #expect(img.rgba[4 * i] == 12 && img.rgba[4 * i + 1] == 34 && img.rgba[4 * i + 2] == 200)
        }
    }

    @Test func whiteBackgroundGreyInkIsGreyAndBlendsCorrectly() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let png = try PNGEncoder.encode(alpha: alpha, width: width, height: height, background: .white)
        #expect(png[25] == 0, "colour type should be grey")
        #expect(!chunkTypes(png).contains("tRNS"))
        let img = try PNGDecoder.decodeRGBA(png)
        for i in 0..<(width * height) {
            let expected = UInt8(255 - (255 * Int(alpha[i]) + 127) / 255)
            #expect(img.rgba[4 * i] == expected && img.rgba[4 * i + 3] == 255)
        }
    }

    @Test func whiteBackgroundColourInkIsOpaquePalette() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let ink = PNGColor(red: 0, green: 64, blue: 160)
        let png = try PNGEncoder.encode(alpha: alpha, width: width, height: height, color: ink, background: .white)
        #expect(png[25] == 3)
        #expect(!chunkTypes(png).contains("tRNS"))
        let img = try PNGDecoder.decodeRGBA(png)
        // Full coverage is exactly the ink; none is exactly white; everything is opaque.
        for i in 0..<(width * height) {
            #expect(img.rgba[4 * i + 3] == 255)
            if alpha[i] == 255 { #expect(Array(img.rgba[(4 * i)..<(4 * i + 3)]) == [0, 64, 160]) }
            if alpha[i] == 0 { #expect(Array(img.rgba[(4 * i)..<(4 * i + 3)]) == [255, 255, 255]) }
        }
    }

    @Test func greyAlphaRoundTrips() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let opts = PNGOptions(pixelFormat: .grayAlpha)
        let png = try PNGEncoder.encode(alpha: alpha, width: width, height: height, options: opts)
        #expect(png[25] == 4)
        #expect(try PNGDecoder.decodeRGBA(png).alpha == alpha)
    }

    @Test(arguments: [PNGFilter.none, .sub, .up, .average, .paeth, .adaptive])
    func everyFilterAndStrategyRoundTrips(_ filter: PNGFilter) throws {
        let alpha = sampleAlpha(width: width, height: height)
        for strategy in [PNGCompressionStrategy.default, .filtered, .huffmanOnly, .rle, .fixed] {
            for level in [0, 1, 6, 9] {
                let opts = PNGOptions(filter: filter, compressor: .zlib, compressionLevel: level, strategy: strategy)
                let png = try PNGEncoder.encode(alpha: alpha, width: width, height: height, options: opts)
                #expect(try PNGDecoder.decodeRGBA(png).alpha == alpha, "\(filter) \(strategy) \(level)")
            }
        }
    }

    @Test func bothCompressorsWriteTheSamePixelsInEveryFormat() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let blue = PNGColor(red: 0, green: 0x80, blue: 0xFF), grey = PNGColor(red: 60, green: 60, blue: 60)
        let cases: [(PNGColor, PNGBackground, PNGPixelFormat)] = [
            (.black, .transparent, .automatic), (blue, .white, .automatic), (grey, .white, .gray),
            (grey, .transparent, .grayAlpha), (blue, .transparent, .palette),
        ]
        for (color, background, format) in cases {
            var decoded: [PNGDecoder.Image] = []
            var chunks: [[String]] = []
            for compressor in [PNGCompressor.runLength, .zlib] {
                let png = try PNGEncoder.encode(
                    alpha: alpha, width: width, height: height, color: color, background: background,
                    options: PNGOptions(pixelFormat: format, compressor: compressor))
                decoded.append(try PNGDecoder.decodeRGBA(png))
                chunks.append(chunkTypes(png).filter { $0 != "IDAT" })
            }
            #expect(decoded[0] == decoded[1], "\(color) \(background) \(format)")
            #expect(chunks[0] == chunks[1] && chunks[0].first == "IHDR" && chunks[0].last == "IEND", "\(chunks)")
        }
    }

    @Test func runLengthCompressorRefusesFilters() {
        do {
            _ = try PNGEncoder.encode(alpha: [0, 1], width: 2, height: 1, options: PNGOptions(filter: .paeth))
            Issue.record("a filter was accepted by the run-length compressor")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("zlib"), "message: \(error.message)")
        }
    }

    @Test func outputIsDeterministic() throws {
        let alpha = sampleAlpha(width: width, height: height)
        for background in [PNGBackground.transparent, .white] {
            let a = try PNGEncoder.encode(alpha: alpha, width: width, height: height, background: background)
            let b = try PNGEncoder.encode(alpha: alpha, width: width, height: height, background: background)
            #expect(a == b)
        }
    }

    @Test func oneByOnePixel() throws {
        let png = try PNGEncoder.encode(alpha: [200], width: 1, height: 1)
        #expect(try PNGDecoder.decodeRGBA(png).alpha == [200])
    }

    @Test func wrongBufferSizeIsRejected() {
        #expect(throws: PNGError.self) {
            try PNGEncoder.encode(alpha: [1, 2, 3], width: 2, height: 2)
        }
        do {
            _ = try PNGEncoder.encode(alpha: [], width: 0, height: 5)
            Issue.record("zero width accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func libpngErrorsComeBackWithLibpngsMessage() {
        // Wider than libpng's default user limit (1,000,000): libpng itself refuses the IHDR,
        // longjmps inside the shim, and the shim frees everything and returns its message.
        let alpha = [UInt8](repeating: 0, count: 1_000_001)
        do {
            _ = try PNGEncoder.encode(alpha: alpha, width: 1_000_001, height: 1)
            Issue.record("libpng accepted an over-wide image")
        } catch {
            #expect(error.code == .libpng)
            #expect(error.message.contains("IHDR"), "message: \(error.message)")
        }
        // And the encoder still works afterwards.
        #expect((try? PNGEncoder.encode(alpha: [0, 255], width: 2, height: 1)) != nil)
    }

    @Test func colourFormatMismatchesAreRejected() {
        let blue = PNGColor(red: 0, green: 0, blue: 255)
        #expect(throws: PNGError.self) {
            try PNGEncoder.encode(alpha: [0], width: 1, height: 1, color: blue, options: PNGOptions(pixelFormat: .grayAlpha))
        }
        #expect(throws: PNGError.self) {
            try PNGEncoder.encode(alpha: [0], width: 1, height: 1, options: PNGOptions(pixelFormat: .gray))
        }
    }

    @Test func decodingGarbageGivesLibpngsMessage() {
        do {
            _ = try PNGDecoder.decodeRGBA([0x89, 0x50, 0x4E, 0x47, 1, 2, 3, 4, 5, 6, 7, 8])
            Issue.record("garbage decoded")
        } catch {
            #expect(error.code == .libpng)
            #expect(!error.message.isEmpty)
        }
    }

    /// Feeds `alpha` to a row writer in chunks of the given sizes (cycled).
    private func writeInChunks(
        _ alpha: [UInt8], width: Int, height: Int, chunks: [Int], color: PNGColor = .black,
        background: PNGBackground = .transparent, options: PNGOptions = .default
    ) throws -> [UInt8] {
        let writer = try PNGRowWriter(width: width, height: height, color: color, background: background, options: options)
        try alpha.withUnsafeBufferPointer { buf in
            var y = 0, k = 0
            while y < height {
                let n = min(chunks[k % chunks.count], height - y)
                let rows = (y..<(y + n)).map { UnsafePointer(buf.baseAddress! + $0 * width) }
                try rows.withUnsafeBufferPointer { try writer.write(rows: $0) }
                y += n
                k += 1
            }
        }
        return try writer.finish()
    }

    @Test func rowWriterGivesTheSameFileAsTheWholeImageEncoder() throws {
        let alpha = sampleAlpha(width: width, height: height)
        let blue = PNGColor(red: 0, green: 0x80, blue: 0xFF), grey = PNGColor(red: 60, green: 60, blue: 60)
        let cases: [(PNGColor, PNGBackground, PNGOptions)] = [
            (.black, .transparent, .default),
            (blue, .white, .default),
            (grey, .white, .default),
            (grey, .transparent, PNGOptions(pixelFormat: .grayAlpha)),
            (.black, .transparent, PNGOptions(filter: .adaptive, compressor: .zlib, strategy: .default)),
            (.black, .transparent, PNGOptions(compressor: .zlib)),
            (grey, .transparent, PNGOptions(pixelFormat: .grayAlpha, compressor: .zlib)),
            (grey, .white, PNGOptions(compressor: .zlib)),
        ]
        for (color, background, options) in cases {
            let whole = try PNGEncoder.encode(
                alpha: alpha, width: width, height: height, color: color, background: background, options: options)
            for chunks in [[1], [16], [5, 1, 40], [height]] {
                let streamed = try writeInChunks(
                    alpha, width: width, height: height, chunks: chunks, color: color, background: background,
                    options: options)
                #expect(streamed == whole, "\(color) \(background) \(options) chunks \(chunks)")
            }
        }
    }

    @Test func rowWriterRejectsWrongRowCounts() throws {
        let alpha = sampleAlpha(width: 8, height: 4)
        // Too many rows: the fifth is refused, before libpng sees it.
        let full = try PNGRowWriter(width: 8, height: 4)
        try alpha.withUnsafeBufferPointer { buf in
            let rows = (0..<5).map { UnsafePointer(buf.baseAddress! + ($0 % 4) * 8) }
            try rows[0..<4].withUnsafeBufferPointer { try full.write(rows: $0) }
            #expect(throws: PNGError.self) { try rows[4..<5].withUnsafeBufferPointer { try full.write(rows: $0) } }
        }
        #expect(try PNGDecoder.decodeRGBA(try full.finish()).alpha == alpha)
        // Finishing early.
        let writer = try PNGRowWriter(width: 8, height: 4)
        try alpha.withUnsafeBufferPointer { buf in
            let rows = [UnsafePointer(buf.baseAddress!)]
            try rows.withUnsafeBufferPointer { try writer.write(rows: $0) }
        }
        do {
            _ = try writer.finish()
            Issue.record("finished after 1 of 4 rows")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        // A writer that was never finished is released without complaint.
        _ = try PNGRowWriter(width: 8, height: 4)
        // libpng's own refusal comes back from the constructor, with its message.
        do {
            _ = try PNGRowWriter(width: 1_000_001, height: 1)
            Issue.record("libpng accepted an over-wide image")
        } catch {
            #expect(error.code == .libpng)
            #expect(error.message.contains("IHDR"), "message: \(error.message)")
        }
        #expect(throws: PNGError.self) { _ = try PNGRowWriter(width: 0, height: 1) }
    }
}
