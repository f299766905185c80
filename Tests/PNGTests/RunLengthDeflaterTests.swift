import CZlib
import Testing

@testable import PNG

/// zlib's own inflater, as the independent check of our streams (it verifies the Adler-32 too).
private func inflate(_ stream: [UInt8], expectedSize: Int) throws -> [UInt8] {
    var output = [UInt8](repeating: 0, count: max(expectedSize, 1))
    var length = uLongf(output.count)
    let status = stream.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
        }
    }
    try #require(status == Z_OK, "zlib uncompress returned \(status)")
    return Array(output[0..<Int(length)])
}

/// `input` through a deflater, appended in pieces of the given sizes (cycled).
private func deflate(_ input: [UInt8], pieces: [Int] = [Int.max], blockTokens: Int = RunLengthDeflater.defaultBlockTokens) -> [UInt8] {
    let deflater = RunLengthDeflater(blockTokens: blockTokens)
    input.withUnsafeBufferPointer { buffer in
        var offset = 0, piece = 0
        while offset < input.count {
            let size = min(pieces[piece % pieces.count], input.count - offset)
            if size == 1 {
                deflater.append(buffer[offset])
            } else {
                deflater.append(UnsafeBufferPointer(rebasing: buffer[offset..<(offset + size)]))
            }
            offset += size
            piece += 1
        }
    }
    return deflater.finish()
}

/// A deterministic pseudo-random byte source (xorshift), so failures reproduce.
private struct Bytes {
    var state: UInt64
    mutating func next() -> UInt8 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

@Suite struct RunLengthDeflaterTests {
    /// Inputs that hit each path: no input, one byte, runs just below, at and above the longest
    /// match (258), runs of every length 1...20, incompressible noise, and a signature-like mix.
    static let inputs: [(String, [UInt8])] = {
        var noise = Bytes(state: 0x9E37_79B9_7F4A_7C15)
        var runs: [UInt8] = []
        for length in 1...20 { runs += [UInt8](repeating: UInt8(length * 11), count: length) }
        var signature: [UInt8] = []
        for row in 0..<60 {
            signature.append(0)  // filter byte, as in PNG scanlines
            for x in 0..<400 {
                let edge = abs(x - 200 - row) < 6 ? UInt8(truncatingIfNeeded: 40 * abs(x - 200 - row)) : 0
                signature.append(abs(x - 200 - row) < 3 ? 255 : edge)
            }
        }
        return [
            ("empty", []),
            ("one byte", [7]),
            ("two equal", [5, 5]),
            ("three equal", [5, 5, 5]),
            ("zeros 257", [UInt8](repeating: 0, count: 257)),
            ("zeros 258", [UInt8](repeating: 0, count: 258)),
            ("zeros 259", [UInt8](repeating: 0, count: 259)),
            ("zeros 260", [UInt8](repeating: 0, count: 260)),
            ("zeros 261", [UInt8](repeating: 0, count: 261)),
            ("ones 20000", [UInt8](repeating: 255, count: 20_000)),
            ("runs 1...20", runs),
            ("noise", (0..<20_000).map { _ in noise.next() }),
            ("signature-like", signature),
        ]
    }()

    @Test(arguments: 0..<inputs.count)
    func zlibInflatesEveryStreamBackToItsInput(_ index: Int) throws {
        let (name, input) = Self.inputs[index]
        // Byte by byte only where it stays quick in a debug build.
        for pieces in input.count <= 30_000 ? [[Int.max], [1], [7, 1, 300], [401]] : [[Int.max], [7, 1, 300]] {
            for blockTokens in [RunLengthDeflater.defaultBlockTokens, 5] {
                let stream = deflate(input, pieces: pieces, blockTokens: blockTokens)
                #expect(try inflate(stream, expectedSize: input.count) == input,
                        "\(name), pieces \(pieces), \(blockTokens) tokens per block")
            }
        }
    }

    @Test("the Adler-32 sums, reduced only every 2^22 bytes, match zlib's over 9 MiB of the largest bytes")
    func checksumAcrossReductions() throws {
        // 255s make both sums grow fastest; runs and literals alternate so both update paths run,
        // in one call (split internally) and in row-sized pieces (reduced between calls).
        var input = [UInt8](repeating: 255, count: 9 << 20)
        for index in Swift.stride(from: 0, to: input.count, by: 1_000) { input[index] = 254 }
        for pieces in [[Int.max], [2_401]] {
            let stream = deflate(input, pieces: pieces)
            #expect(try inflate(stream, expectedSize: input.count) == input, "pieces \(pieces)")
        }
        #expect(RunLengthDeflater.reductionInterval == 1 << 22)
    }

    @Test func longRunsCostAlmostNothing() {
        // A blank 1200 x 670 scanline image (filter byte + 1200 zeros per row): matches of 258.
        let blank = [UInt8](repeating: 0, count: 1201 * 670)
        let stream = deflate(blank)
        #expect(stream.count < 1_200, "\(stream.count) bytes for a blank image")
    }

    @Test func outputDependsOnlyOnTheBytes() {
        let (_, input) = Self.inputs.last!
        #expect(deflate(input) == deflate(input))
        #expect(deflate(input, pieces: [1]) == deflate(input, pieces: [401]))
    }

    @Test func huffmanCodesAreCompleteAndWithinTheirLimit() {
        // Fibonacci frequencies make an optimal code 30 levels deep: the limit must bite.
        var fibonacci: [UInt32] = [1, 1]
        while fibonacci.count < 30 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
        var noise = Bytes(state: 42)
        let cases: [(String, [UInt32], Int)] = [
            ("fibonacci, limit 15", fibonacci + [UInt32](repeating: 0, count: 256), 15),
            ("fibonacci, limit 7", Array(fibonacci.prefix(19)), 7),
            ("one symbol", [0, 0, 9, 0], 15),
            ("no symbol", [0, 0, 0], 7),
            ("uniform 286", [UInt32](repeating: 3, count: 286), 15),
            ("noise", (0..<286).map { _ in UInt32(noise.next()) }, 15),
        ]
        for (name, frequencies, limit) in cases {
            let code = HuffmanCode(frequencies: frequencies, maxLength: limit)
            let used = code.lengths.filter { $0 > 0 }
            #expect(used.count >= 2, "\(name)")
            #expect(used.allSatisfy { Int($0) <= limit }, "\(name): \(code.lengths)")
            // Kraft sum exactly 1: the code is complete, as inflaters require.
            let kraft = used.reduce(0) { $0 + (1 << (limit - Int($1))) }
            #expect(kraft == 1 << limit, "\(name): Kraft sum \(kraft) of \(1 << limit)")
            // Every symbol that occurs has a code, and a more frequent one is never longer.
            for (symbol, frequency) in frequencies.enumerated() where frequency > 0 {
                #expect(code.lengths[symbol] > 0, "\(name): symbol \(symbol)")
                for (other, otherFrequency) in frequencies.enumerated() where otherFrequency > frequency {
                    #expect(code.lengths[other] <= code.lengths[symbol], "\(name): \(other) vs \(symbol)")
                }
            }
        }
        // Unlimited by the cap, it is a true Huffman code: 1, 1, 2, 4 gives lengths 3, 3, 2, 1.
        #expect(HuffmanCode(frequencies: [1, 1, 2, 4], maxLength: 15).lengths == [3, 3, 2, 1])
    }

    @Test func codesArePrefixFreeAndCanonical() {
        let code = HuffmanCode(frequencies: [5, 9, 12, 13, 16, 45], maxLength: 15)
        // Undo the bit reversal, then check RFC 1951's canonical order and that no code is a
        // prefix of another.
        let codes: [(value: Int, length: Int)] = code.lengths.indices.map { symbol in
            let length = Int(code.lengths[symbol])
            var value = 0
            for bit in 0..<length where Int(code.codes[symbol]) & (1 << bit) != 0 { value |= 1 << (length - 1 - bit) }
            return (value, length)
        }
        for i in codes.indices {
            for j in codes.indices where i != j {
                let (a, b) = (codes[i], codes[j])
                if a.length <= b.length { #expect(b.value >> (b.length - a.length) != a.value, "\(i) prefixes \(j)") }
                if a.length == b.length && i < j { #expect(a.value < b.value, "canonical order \(i), \(j)") }
            }
        }
    }
}
