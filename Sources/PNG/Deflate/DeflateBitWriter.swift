/// Packs deflate's bit fields into bytes, least significant bit first (RFC 1951 §3.1.1).
///
/// The output lives in one growing buffer owned by this value (freed with it); completed bits
/// are stored 32 at a time, so a field costs a shift, an or and, every few fields, one store.
struct DeflateBitWriter: ~Copyable {
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes completed in `buffer`.
    private var count = 0
    private var pending: UInt64 = 0
    private var pendingCount = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        buffer = .allocate(capacity: self.capacity)
    }

    deinit { buffer.deallocate() }

    /// The completed bytes (after ``alignToByte()``, all of them).
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: buffer, count: count)) }

    /// Appends the low `count` bits of `value` (at most 32), first bit first.
    @inline(__always)
    mutating func write(_ value: UInt32, count bits: Int) {
        if count &+ 4 > capacity { grow(atLeast: 4) }
        Self.put(value, bits: bits, into: UnsafeMutableRawPointer(buffer), pending: &pending, pendingCount: &pendingCount, count: &count)
    }

    /// Appends `count` tokens, token `t` as the low `widths[t]` bits (at most 32) of `fields[t]`:
    /// ``write(_:count:)`` in a loop that keeps the pending bits in registers (called through a
    /// class's stored property, each single write loaded and stored them again).
    mutating func write(tokens: UnsafePointer<UInt16>, count tokenCount: Int,
                        fields: UnsafePointer<UInt32>, widths: UnsafePointer<UInt8>) {
        // At most 32 bits, so 4 bytes, per token.
        let (needed, overflow) = tokenCount.multipliedReportingOverflow(by: 4)
        precondition(!overflow, "too many tokens")
        if count &+ needed > capacity { grow(atLeast: needed) }
        var pending = self.pending, pendingCount = self.pendingCount, count = self.count
        let buffer = UnsafeMutableRawPointer(self.buffer)
        for index in 0..<tokenCount {
            let token = Int(tokens[index])
            Self.put(fields[token], bits: Int(widths[token]), into: buffer, pending: &pending, pendingCount: &pendingCount, count: &count)
        }
        self.pending = pending
        self.pendingCount = pendingCount
        self.count = count
    }

    /// One field into the pending bits; a completed 32-bit word goes to `buffer` at `count`, which
    /// must have room for it.
    @inline(__always)
    private static func put(_ value: UInt32, bits: Int, into buffer: UnsafeMutableRawPointer,
                            pending: inout UInt64, pendingCount: inout Int, count: inout Int) {
        pending |= UInt64(value) << UInt64(pendingCount)
        pendingCount &+= bits
        if pendingCount >= 32 {
            buffer.storeBytes(of: UInt32(truncatingIfNeeded: pending).littleEndian, toByteOffset: count, as: UInt32.self)
            count &+= 4
            pending >>= 32
            pendingCount &-= 32
        }
    }

    /// Pads the last byte with zero bits.
    mutating func alignToByte() {
        while pendingCount > 0 {
            appendByte(UInt8(truncatingIfNeeded: pending))
            pending >>= 8
            pendingCount -= 8
        }
        pending = 0
        pendingCount = 0
    }

    /// Appends whole bytes (after ``alignToByte()``).
    mutating func append(bytes more: [UInt8]) {
        precondition(pendingCount == 0, "not byte-aligned")
        for byte in more { appendByte(byte) }
    }

    private mutating func appendByte(_ byte: UInt8) {
        if count == capacity { grow(atLeast: 1) }
        buffer[count] = byte
        count += 1
    }

    private mutating func grow(atLeast extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = bigger
        capacity = newCapacity
    }
}
