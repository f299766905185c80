/// A canonical Huffman code of limited length for one deflate alphabet (RFC 1951 §3.2.2), built
/// from symbol frequencies.
///
/// The code is always complete (its Kraft sum is exactly 1), as inflaters expect: when fewer
/// than two symbols occur, unused symbols are given the missing codes.
struct HuffmanCode {
    /// Bit length of each symbol's code; 0 for a symbol without a code.
    private(set) var lengths: [UInt8]
    /// Each symbol's code with its bits reversed, ready for deflate's LSB-first bit order.
    private(set) var codes: [UInt16]

    /// The optimal code for `frequencies` when no code is longer than `maxLength` bits, or a
    /// near-optimal one when the optimal code would need longer ones. Deterministic: equal
    /// frequencies are ordered by symbol.
    init(frequencies: [UInt32], maxLength: Int) {
        precondition(frequencies.count >= 2 && maxLength >= 1 && maxLength <= 15)
        precondition(frequencies.count <= 1 << maxLength, "more symbols than codes of maxLength bits")
        var weights = frequencies
        var symbols = weights.indices.filter { weights[$0] > 0 }
        var unused = 0
        while symbols.count < 2 {
            if weights[unused] == 0 {
                weights[unused] = 1
                symbols.append(unused)
            }
            unused += 1
        }
        // By weight, then symbol: one integer sort of (weight << 32 | symbol).
        symbols = symbols.map { UInt64(weights[$0]) << 32 | UInt64($0) }.sorted().map { Int(truncatingIfNeeded: $0 & 0xFFFF_FFFF) }

        let depths = Self.depths(sortedWeights: symbols.map { UInt64(weights[$0]) })
        // How many codes of each length: the optimal lengths, clamped to maxLength, then
        // made complete again by lengthening shorter codes (each step keeps the code count and
        // removes one unit of oversubscription, in units of 2^-maxLength).
        var countOfLength = [Int](repeating: 0, count: maxLength + 1)
        for depth in depths { countOfLength[min(depth, maxLength)] += 1 }
        var kraft = 0
        for length in 1...maxLength { kraft += countOfLength[length] << (maxLength - length) }
        while kraft > 1 << maxLength {
            countOfLength[maxLength] -= 1
            for length in stride(from: maxLength - 1, through: 1, by: -1) where countOfLength[length] > 0 {
                countOfLength[length] -= 1
                countOfLength[length + 1] += 2
                break
            }
            kraft -= 1
        }
        // The rarest symbols get the longest codes.
        var lengths = [UInt8](repeating: 0, count: frequencies.count)
        var next = 0
        for length in stride(from: maxLength, through: 1, by: -1) {
            for _ in 0..<countOfLength[length] {
                lengths[symbols[next]] = UInt8(length)
                next += 1
            }
        }
        self.lengths = lengths
        self.codes = Self.canonicalCodes(lengths: lengths, maxLength: maxLength)
    }

    /// Code lengths of a Huffman tree over weights sorted in ascending order (at least two),
    /// built with two queues (leaves in order, then internal nodes, which are created in
    /// ascending order of weight too); a tie takes the leaf first.
    private static func depths(sortedWeights leaves: [UInt64]) -> [Int] {
        let leafCount = leaves.count
        let nodeCount = 2 * leafCount - 1
        var weight = leaves + [UInt64](repeating: 0, count: leafCount - 1)
        var parent = [Int](repeating: 0, count: nodeCount)
        var nextLeaf = 0
        var nextInternal = leafCount
        for node in leafCount..<nodeCount {
            // The lighter head of the two queues (internal nodes before `node` exist).
            func lightest() -> Int {
                if nextLeaf < leafCount && (nextInternal == node || weight[nextLeaf] <= weight[nextInternal]) {
                    nextLeaf += 1
                    return nextLeaf - 1
                }
                nextInternal += 1
                return nextInternal - 1
            }
            let first = lightest(), second = lightest()
            weight[node] = weight[first] + weight[second]
            parent[first] = node
            parent[second] = node
        }
        // Parents come after their children, so one backward pass gives every depth.
        var depth = [Int](repeating: 0, count: nodeCount)
        for node in stride(from: nodeCount - 2, through: 0, by: -1) { depth[node] = depth[parent[node]] + 1 }
        return Array(depth[0..<leafCount])
    }

    /// RFC 1951 §3.2.2: codes of one length are consecutive, in symbol order, and shorter codes
    /// precede longer ones; returned bit-reversed.
    private static func canonicalCodes(lengths: [UInt8], maxLength: Int) -> [UInt16] {
        var countOfLength = [Int](repeating: 0, count: maxLength + 1)
        for length in lengths where length > 0 { countOfLength[Int(length)] += 1 }
        var nextCode = [Int](repeating: 0, count: maxLength + 1)
        var code = 0
        for length in 1...maxLength {
            code = (code + countOfLength[length - 1]) << 1
            nextCode[length] = code
        }
        var codes = [UInt16](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length > 0 {
            let value = nextCode[Int(length)]
            nextCode[Int(length)] += 1
            codes[symbol] = reversed(UInt16(truncatingIfNeeded: value), bits: Int(length))
        }
        return codes
    }

    /// The low `bits` bits of `value` (the rest zero) in reverse order: the bits swapped in pairs,
    /// nibbles and bytes, then shifted down (a bit-by-bit loop showed in profiles under upload load).
    private static func reversed(_ value: UInt16, bits: Int) -> UInt16 {
        var v = value
        v = (v & 0x5555) << 1 | (v >> 1) & 0x5555
        v = (v & 0x3333) << 2 | (v >> 2) & 0x3333
        v = (v & 0x0F0F) << 4 | (v >> 4) & 0x0F0F
        return v.byteSwapped >> (16 - bits)
    }
}
