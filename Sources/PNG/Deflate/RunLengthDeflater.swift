/// Compresses bytes into a zlib stream (RFC 1950 around RFC 1951 deflate data) the way zlib's
/// `Z_RLE` strategy does: every repeat of the previous byte becomes a match at distance 1, every
/// other byte a literal, in dynamic-Huffman blocks.
///
/// Signature images are mostly long runs of one value (no ink, or full ink), and this is all
/// zlib finds in them with `Z_RLE` too; but zlib still keeps a 32 KiB window, slides it and its
/// hash tables every 32 KiB and checksums byte by byte, which is most of its time on these
/// images (docs/decisions/0002-run-length-deflate.md). Here a run is found 32 bytes at a
/// time and checksummed in closed form, so the cost follows the ink, not the pixel count.
///
/// Deterministic: the output depends only on the input bytes and `blockTokens` (integer
/// arithmetic only, no tables chosen by CPU).
final class RunLengthDeflater {
    /// Symbols per block before a new Huffman code is chosen: fewer codes to build than smaller
    /// blocks, the same sizes; the sizes measured are in docs/decisions/0002-run-length-deflate.md.
    static let defaultBlockTokens = 32_768

    private let blockTokens: Int
    /// The pending block: a literal byte (0...255) or `256 + length - 3` for a match of
    /// `length` (3...258) at distance 1.
    private let tokens: UnsafeMutablePointer<UInt16>
    private var tokenCount = 0
    /// Uses of each literal/length symbol in the pending block.
    private let literalFrequencies: UnsafeMutablePointer<UInt32>
    private var writer: DeflateBitWriter
    /// Where the stream stands between calls (see ``Cursor``).
    private var cursor = Cursor()
    private var started = false
    private var finished = false

    /// The state the inner loop keeps in registers.
    private struct Cursor {
        /// The last byte of the input so far (a run repeats it); meaningless before the first byte.
        var previous: UInt8 = 0
        /// Bytes equal to `previous` after the last token, not yet coded.
        var run = 0
        /// Adler-32 sums, reduced modulo 65521 only before `reductionInterval` more input bytes
        /// (64-bit sums cannot overflow in between: see ``reductionInterval``).
        var a: UInt64 = 1
        var b: UInt64 = 0
        /// Input bytes since the sums were last reduced.
        var unreduced = 0
    }

    /// A deflater expecting about `expectedSize` input bytes (for the output's first allocation).
    init(expectedSize: Int = 0, blockTokens: Int = RunLengthDeflater.defaultBlockTokens) {
        precondition(blockTokens > 0)
        self.blockTokens = blockTokens
        tokens = .allocate(capacity: blockTokens)
        literalFrequencies = .allocate(capacity: 286)
        literalFrequencies.initialize(repeating: 0, count: 286)
        writer = DeflateBitWriter(capacity: expectedSize / 16 + 256)
        // CMF 0x78: deflate, 32 KiB window; FLG 0x01: "fastest" level, and 0x7801 % 31 == 0.
        writer.write(0x78, count: 8)
        writer.write(0x01, count: 8)
    }

    deinit {
        tokens.deallocate()
        literalFrequencies.deallocate()
    }

    /// Appends one byte of input.
    func append(_ byte: UInt8) {
        withUnsafePointer(to: byte) { append(UnsafeBufferPointer(start: $0, count: 1)) }
    }

    /// Appends the bytes of `input`.
    func append(_ input: UnsafeBufferPointer<UInt8>) {
        precondition(!finished, "append after finish")
        guard let base = input.baseAddress, !input.isEmpty else { return }
        var start = 0
        while start < input.count {
            let count = min(input.count - start, Self.reductionInterval)
            appendPiece(UnsafeBufferPointer(start: base + start, count: count))
            start += count
        }
    }

    /// Appends at most ``reductionInterval`` bytes.
    private func appendPiece(_ input: UnsafeBufferPointer<UInt8>) {
        let base = input.baseAddress!
        let count = input.count
        var index = 0
        var state = cursor
        if state.unreduced >= Self.reductionInterval {
            state.a %= UInt64(Self.adlerModulus)
            state.b %= UInt64(Self.adlerModulus)
            state.unreduced = 0
        }
        state.unreduced &+= count
        if !started {
            started = true
            literal(base[0], &state)
            index = 1
        }
        while index < count {
            let byte = base[index]
            if byte == state.previous {
                // A run goes on: find its end (one byte compare first, as most anti-aliased edge
                // bytes differ from their neighbour and a wide scan would be wasted on them).
                let end = Self.endOfRun(base, from: index &+ 1, count: count, of: byte)
                extendRun(by: end &- index, &state)
                index = end
            } else {
                if state.run > 0 { codeRun(&state) }
                literal(byte, &state)
                index &+= 1
            }
        }
        cursor = state
    }

    /// Ends the stream (final block, Adler-32 trailer) and returns it. Call once.
    func finish() -> [UInt8] {
        precondition(!finished, "finish called twice")
        finished = true
        var state = cursor
        codeRun(&state)
        writeBlock(final: true)
        writer.alignToByte()
        let modulus = UInt64(Self.adlerModulus)
        let adler = UInt32(truncatingIfNeeded: (state.b % modulus) << 16 | state.a % modulus)
        writer.append(bytes: [UInt8(adler >> 24), UInt8(truncatingIfNeeded: adler >> 16),
                              UInt8(truncatingIfNeeded: adler >> 8), UInt8(truncatingIfNeeded: adler)])
        return writer.bytes
    }

    // MARK: - Tokens

    /// The first index at or after `start` whose byte is not `value` (`count` if none).
    @inline(__always)
    private static func endOfRun(_ base: UnsafePointer<UInt8>, from start: Int, count: Int, of value: UInt8) -> Int {
        let pattern = UInt64(value) &* 0x0101_0101_0101_0101
        let raw = UnsafeRawPointer(base)
        var index = start
        // 32 bytes per step through the long runs (empty rows, stroke interiors)...
        while index &+ 32 <= count {
            let differences = (raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ pattern)
                | (raw.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self) ^ pattern)
                | (raw.loadUnaligned(fromByteOffset: index &+ 16, as: UInt64.self) ^ pattern)
                | (raw.loadUnaligned(fromByteOffset: index &+ 24, as: UInt64.self) ^ pattern)
            if differences != 0 { break }
            index &+= 32
        }
        // ...then 8 at a time, to find where the run ends.
        while index &+ 8 <= count {
            // Byte order made little-endian, so the lowest set bit marks the first difference.
            let difference = (raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ pattern).littleEndian
            if difference != 0 { return index &+ difference.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < count && base[index] == value { index &+= 1 }
        return index
    }

    @inline(__always)
    private func literal(_ byte: UInt8, _ state: inout Cursor) {
        state.a &+= UInt64(byte)
        state.b &+= state.a
        state.previous = byte
        push(UInt16(byte), symbol: Int(byte))
    }

    /// `count` more bytes equal to `previous`; full-length matches are coded at once.
    @inline(__always)
    private func extendRun(by count: Int, _ state: inout Cursor) {
        // Adler-32 after n bytes of value v from (a, b): a + n·v and b + n·a + v·n(n+1)/2.
        let n = UInt64(count)
        let v = UInt64(state.previous)
        state.b &+= n &* state.a &+ v &* (n &* (n &+ 1) / 2)
        state.a &+= n &* v
        state.run &+= count
        while state.run >= 258 {
            push(256 + 255, symbol: 285)
            state.run &-= 258
        }
    }

    /// Codes the pending run: a match when it is long enough, else literals.
    @inline(__always)
    private func codeRun(_ state: inout Cursor) {
        if state.run >= 3 {
            let index = state.run &- 3
            push(UInt16(truncatingIfNeeded: 256 &+ index), symbol: Int(Self.lengthCodes[index].symbol))
        } else {
            for _ in 0..<state.run { push(UInt16(state.previous), symbol: Int(state.previous)) }
        }
        state.run = 0
    }

    @inline(__always)
    private func push(_ token: UInt16, symbol: Int) {
        tokens[tokenCount] = token
        tokenCount &+= 1
        literalFrequencies[symbol] &+= 1
        if tokenCount == blockTokens { writeBlock(final: false) }
    }

    // MARK: - Blocks

    /// Writes the pending tokens as one block with dynamic Huffman codes (RFC 1951 §3.2.7).
    private func writeBlock(final: Bool) {
        literalFrequencies[256] = 1  // end of block
        let literals = HuffmanCode(frequencies: Array(UnsafeBufferPointer(start: literalFrequencies, count: 286)), maxLength: 15)
        writer.write(final ? 1 : 0, count: 1)
        writer.write(2, count: 2)  // dynamic Huffman codes
        writeCodeLengths(literals)

        // Every token as one bit field: its code, the length's extra bits and, for a match,
        // the distance code (symbol 0, distance 1, whose code is the single bit 0).
        var fields = [UInt32](repeating: 0, count: 512)
        var widths = [UInt8](repeating: 0, count: 512)
        for byte in 0..<256 {
            fields[byte] = UInt32(literals.codes[byte])
            widths[byte] = literals.lengths[byte]
        }
        for index in 0..<256 {
            let length = Self.lengthCodes[index]
            let codeWidth = literals.lengths[Int(length.symbol)]
            fields[256 + index] = UInt32(literals.codes[Int(length.symbol)]) | UInt32(length.extra) << UInt32(codeWidth)
            widths[256 + index] = codeWidth + length.extraBits + 1
        }
        fields.withUnsafeBufferPointer { fields in
            widths.withUnsafeBufferPointer { widths in
                writer.write(tokens: tokens, count: tokenCount, fields: fields.baseAddress!, widths: widths.baseAddress!)
            }
        }
        writer.write(UInt32(literals.codes[256]), count: Int(literals.lengths[256]))
        tokenCount = 0
        literalFrequencies.update(repeating: 0, count: 286)
    }

    /// The order in which the code-length code's lengths are sent.
    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// HLIT, HDIST, HCLEN and the run-length coded code lengths of both alphabets.
    private func writeCodeLengths(_ literals: HuffmanCode) {
        var literalCount = 286
        while literalCount > 257 && literals.lengths[literalCount - 1] == 0 { literalCount -= 1 }
        // Distances: code 0 (distance 1) and code 1 (never used, completing the code), 1 bit each.
        let sequence = Array(literals.lengths[0..<literalCount]) + [1, 1]

        // Repeats: 16 = previous length 3-6 times, 17 = zero 3-10 times, 18 = zero 11-138 times.
        var items: [(symbol: UInt8, extra: UInt8)] = []
        var frequencies = [UInt32](repeating: 0, count: 19)
        func item(_ symbol: UInt8, _ extra: UInt8 = 0) {
            items.append((symbol, extra))
            frequencies[Int(symbol)] += 1
        }
        var index = 0
        while index < sequence.count {
            let length = sequence[index]
            var repeats = 1
            while index + repeats < sequence.count && sequence[index + repeats] == length { repeats += 1 }
            index += repeats
            if length == 0 {
                while repeats >= 11 {
                    let n = min(repeats, 138)
                    item(18, UInt8(n - 11))
                    repeats -= n
                }
                if repeats >= 3 {
                    item(17, UInt8(repeats - 3))
                    repeats = 0
                }
            } else {
                item(length)
                repeats -= 1
                while repeats >= 3 {
                    let n = min(repeats, 6)
                    item(16, UInt8(n - 3))
                    repeats -= n
                }
            }
            for _ in 0..<repeats { item(length) }
        }

        let code = HuffmanCode(frequencies: frequencies, maxLength: 7)
        var codeCount = 19
        while codeCount > 4 && code.lengths[Self.codeLengthOrder[codeCount - 1]] == 0 { codeCount -= 1 }
        writer.write(UInt32(literalCount - 257), count: 5)
        writer.write(UInt32(2 - 1), count: 5)
        writer.write(UInt32(codeCount - 4), count: 4)
        for position in 0..<codeCount { writer.write(UInt32(code.lengths[Self.codeLengthOrder[position]]), count: 3) }
        for (symbol, extra) in items {
            writer.write(UInt32(code.codes[Int(symbol)]), count: Int(code.lengths[Int(symbol)]))
            switch symbol {
            case 16: writer.write(UInt32(extra), count: 2)
            case 17: writer.write(UInt32(extra), count: 3)
            case 18: writer.write(UInt32(extra), count: 7)
            default: break
            }
        }
    }

    // MARK: - Tables

    private static let adlerModulus: UInt32 = 65_521

    /// Input bytes between reductions of the Adler-32 sums. From reduced sums (< 65521), after
    /// `n` more bytes `a` < 65521 + 255·n and `b` < 65521 + n·(65521 + 255·n); the sums are
    /// reduced when at least this many bytes went in, so n < 2 × 2^22 and `b` < 2^56: no overflow
    /// in 64 bits, and no modulo in the per-byte loop (it was one compare per literal and four
    /// divisions per run).
    static let reductionInterval = 1 << 22

    /// For each match length 3...258 (index `length - 3`): its length symbol (257...285) and
    /// extra bits (RFC 1951 §3.2.5).
    private static let lengthCodes: [(symbol: UInt16, extraBits: UInt8, extra: UInt16)] = {
        let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                     67, 83, 99, 115, 131, 163, 195, 227, 258]
        let extraBits: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                  4, 4, 4, 4, 5, 5, 5, 5, 0]
        return (3...258).map { length in
            // 258 has its own symbol (285); 284's range ends at 257.
            let code = bases.lastIndex { $0 <= length }!
            return (UInt16(257 + code), extraBits[code], UInt16(length - bases[code]))
        }
    }()
}
