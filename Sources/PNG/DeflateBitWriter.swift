/// Packs deflate's bit fields into bytes, least significant bit first (RFC 1951 §3.1.1).
struct DeflateBitWriter {
    /// The completed bytes.
    private(set) var bytes: [UInt8] = []
    private var pending: UInt64 = 0
    private var pendingCount = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Appends the low `count` bits of `value` (at most 32), first bit first.
    @inline(__always)
    mutating func write(_ value: UInt32, count: Int) {
        pending |= UInt64(value) << UInt64(pendingCount)
        pendingCount += count
        if pendingCount >= 32 {
            let word = UInt32(truncatingIfNeeded: pending)
            bytes.append(UInt8(truncatingIfNeeded: word))
            bytes.append(UInt8(truncatingIfNeeded: word >> 8))
            bytes.append(UInt8(truncatingIfNeeded: word >> 16))
            bytes.append(UInt8(truncatingIfNeeded: word >> 24))
            pending >>= 32
            pendingCount -= 32
        }
    }

    /// Pads the last byte with zero bits.
    mutating func alignToByte() {
        while pendingCount > 0 {
            bytes.append(UInt8(truncatingIfNeeded: pending))
            pending >>= 8
            pendingCount -= 8
        }
        pending = 0
        pendingCount = 0
    }

    /// Appends whole bytes (after ``alignToByte()``).
    mutating func append(bytes more: [UInt8]) {
        precondition(pendingCount == 0, "not byte-aligned")
        bytes += more
    }
}
