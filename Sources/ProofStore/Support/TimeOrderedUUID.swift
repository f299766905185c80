import Foundation

extension UUID {
    /// A version 7 UUID (RFC 9562, section 5.7): the Unix time of `date` in milliseconds (to the
    /// nearest, as the service rounds receipt times) in its first 48 bits, big-endian, then the
    /// version, 12 random bits, the variant and 62 more random bits.
    ///
    /// Why not version 4: PostgreSQL orders a `uuid` by its bytes, so random ids put every new row's
    /// index entry on a random page of the whole index. At a year's size those indexes outgrow the
    /// buffer cache, and each upload dirtied pages all over them: written back at random and, first
    /// touched after a checkpoint, copied whole into the WAL. Ids made later sort later, so new
    /// entries land on the few pages at the index's right edge
    /// (docs/decisions/0037-time-ordered-ids.md). Ids made in the same millisecond are ordered
    /// among themselves at random, which no reader relies on.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        return timeOrdered(at: date, using: &generator)
    }

    /// ``timeOrdered(at:)`` with the random bits from `generator` (tests pass fixed bits).
    static func timeOrdered(at date: Date, using generator: inout some RandomNumberGenerator) -> UUID {
        // Before 1970 or past the year 10889 cannot be a receipt time; clamped, not trapped.
        let milliseconds = UInt64(min(max(0, (date.timeIntervalSince1970 * 1000).rounded()), Double(UInt64(0xFFFF_FFFF_FFFF))))
        let high: UInt64 = generator.next(), low: UInt64 = generator.next()
        // Bytes 0–5 the time; byte 6 the version (7) over 4 random bits; byte 8 the variant (0b10)
        // over 6 random bits; the rest random.
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(uuid: (byte(milliseconds, 40), byte(milliseconds, 32), byte(milliseconds, 24), byte(milliseconds, 16),
                           byte(milliseconds, 8), byte(milliseconds, 0),
                           0x70 | (byte(high, 0) & 0x0F), byte(high, 8),
                           0x80 | (byte(low, 0) & 0x3F), byte(low, 8), byte(low, 16), byte(low, 24), byte(low, 32), byte(low, 40),
                           byte(low, 48), byte(low, 56)))
    }
}
