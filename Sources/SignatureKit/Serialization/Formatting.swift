/// Deterministic, locale-free number formatting shared by the serializer and the SVG writer
/// (in SignatureRender, hence public; inlinable so the writer's per-coordinate calls stay as
/// cheap as inside this module).
public enum Formatting {
    /// Largest magnitude formatted with fixed decimals; beyond it values are clamped.
    @usableFromInline static let maxMagnitude = 1e12

    /// `v` rounded to `decimals` places (half away from zero), trailing zeros and a trailing
    /// point removed, `-0` printed as `0`. Non-finite values print as `0`.
    static func fixed(_ v: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        append(v, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @usableFromInline static let scales: [Double] = [1, 10, 100, 1000, 10000, 100000, 1000000]

    /// Most bytes ``write(_:decimals:to:)`` produces: sign, 13 integer digits, point, 6 decimals.
    public static let maxLength = 21

    /// Appends the fixed representation of `v` to `out` (see ``fixed(_:decimals:)``).
    @inlinable @inline(__always)
    public static func append(_ v: Double, decimals: Int, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buf in
            let n = write(v, decimals: decimals, to: buf.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(start: buf.baseAddress!, count: n))
        }
    }

    /// Writes the fixed representation of `v` at `p` (at most ``maxLength`` bytes) and returns
    /// the number of bytes written.
    @inlinable @inline(__always)
    public static func write(_ v: Double, decimals: Int, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let d = Swift.min(Swift.max(decimals, 0), 6)
        var x = v.isFinite ? v : 0
        x = Swift.min(Swift.max(x, -maxMagnitude), maxMagnitude)
        let scaled = (x * scales[d]).rounded(.toNearestOrAwayFromZero)
        var n = Int64(scaled)
        if n == 0 {
            p[0] = UInt8(ascii: "0")
            return 1
        }
        var count = 0
        if n < 0 {
            p[0] = UInt8(ascii: "-")
            count = 1
            n = -n
        }
        // Drop trailing fractional zeros, then write every digit backwards (fraction, point,
        // integer part) and reverse in place: only constant divisors.
        var places = d
        while places > 0 && n % 10 == 0 {
            n /= 10
            places -= 1
        }
        let first = count
        for _ in 0..<places {
            p[count] = UInt8(truncatingIfNeeded: n % 10) &+ 48
            n /= 10
            count += 1
        }
        if places > 0 {
            p[count] = UInt8(ascii: ".")
            count += 1
        }
        repeat {
            p[count] = UInt8(truncatingIfNeeded: n % 10) &+ 48
            n /= 10
            count += 1
        } while n > 0
        var lo = first, hi = count - 1
        while lo < hi {
            let t = p[lo]
            p[lo] = p[hi]
            p[hi] = t
            lo += 1
            hi -= 1
        }
        return count
    }
}
