/// Deterministic, locale-free number formatting shared by the serializer and the SVG writer.
enum Formatting {
    /// Largest magnitude formatted with fixed decimals; beyond it values are clamped.
    static let maxMagnitude = 1e12

    /// `v` rounded to `decimals` places (half away from zero), trailing zeros and a trailing
    /// point removed, `-0` printed as `0`. Non-finite values print as `0`.
    static func fixed(_ v: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        append(v, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static let scales: [Double] = [1, 10, 100, 1000, 10000, 100000, 1000000]

    /// Appends the fixed representation of `v` to `out` (see ``fixed(_:decimals:)``).
    static func append(_ v: Double, decimals: Int, to out: inout [UInt8]) {
        let d = Swift.min(Swift.max(decimals, 0), 6)
        var x = v.isFinite ? v : 0
        x = Swift.min(Swift.max(x, -maxMagnitude), maxMagnitude)
        let scaled = (x * scales[d]).rounded(.toNearestOrAwayFromZero)
        var n = Int64(scaled)
        if n == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        if n < 0 {
            out.append(UInt8(ascii: "-"))
            n = -n
        }
        let unit = Int64(scales[d])
        var intPart = n / unit
        var frac = n % unit
        // Integer digits.
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[count] = UInt8(intPart % 10) + 48
                intPart /= 10
                count += 1
            } while intPart > 0
            while count > 0 {
                count -= 1
                out.append(buf[count])
            }
        }
        if frac == 0 { return }
        var places = d
        while frac % 10 == 0 {
            frac /= 10
            places -= 1
        }
        out.append(UInt8(ascii: "."))
        var div = Int64(scales[places - 1])
        while div > 0 {
            out.append(UInt8((frac / div) % 10) + 48)
            div /= 10
        }
    }
}
