/// Locale-free decimal number scanning over raw bytes.
///
/// Fast path (Clinger): when the decimal significand fits in 2^53 and the power of ten is at
/// most 22 in magnitude, `Double(m) * 10^e` (or `/ 10^-e`) is correctly rounded. Anything else
/// falls back to the standard library's correctly rounded `Double(String)` (no Foundation).
@usableFromInline
enum NumberScanner {
    @usableFromInline
    enum Result {
        case value(Double)
        case invalid
    }

    @usableFromInline
    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Longest accepted number token in bytes; longer tokens are rejected as invalid.
    @usableFromInline
    static let maxTokenLength = 400

    /// Scans a number starting at `i` (which must be `< end`) and advances `i` past it.
    ///
    /// - Parameter json: strict JSON grammar (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`). When
    ///   `false`, also accepts a leading `+`, leading zeros, `.5` and `5.` (XML Schema / text).
    /// - Returns: `.invalid` when no valid number starts at `i`. The value may be infinite when
    ///   the number overflows; callers report that as `not_finite`.
    @inlinable
    static func scan(_ p: UnsafePointer<UInt8>, _ i: inout Int, _ end: Int, json: Bool) -> Result {
        let start = i
        var j = i
        var negative = false
        if p[j] == UInt8(ascii: "-") {
            negative = true
            j += 1
        } else if !json && p[j] == UInt8(ascii: "+") {
            j += 1
        }
        // Every digit (leading zeros included) goes into the mantissa; more than 19 digits
        // may overflow it, and such numbers take the exact slow path below.
        var mantissa: UInt64 = 0
        var exp10 = 0
        // Integer part.
        if json {
            guard j < end else { return .invalid }
            if p[j] == UInt8(ascii: "0") && j + 1 < end && p[j + 1] &- 48 < 10 { return .invalid }  // leading zero
        }
        while j < end {
            let d = p[j] &- 48
            if d >= 10 { break }
            mantissa = mantissa &* 10 &+ UInt64(d)
            j += 1
        }
        let intDigits = j - i - (negative || (!json && p[i] == UInt8(ascii: "+")) ? 1 : 0)
        var digits = intDigits
        var fracDigits = 0
        if j < end && p[j] == UInt8(ascii: ".") {
            j += 1
            let fracStart = j
            while j < end {
                let d = p[j] &- 48
                if d >= 10 { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                j += 1
            }
            fracDigits = j - fracStart
            if json && fracDigits == 0 { return .invalid }
            digits += fracDigits
            exp10 = -fracDigits
        }
        if intDigits == 0 && (json || fracDigits == 0) { return .invalid }
        if j < end && (p[j] == UInt8(ascii: "e") || p[j] == UInt8(ascii: "E")) {
            j += 1
            var expNegative = false
            if j < end && (p[j] == UInt8(ascii: "-") || p[j] == UInt8(ascii: "+")) {
                expNegative = p[j] == UInt8(ascii: "-")
                j += 1
            }
            var e = 0
            let expStart = j
            while j < end {
                let d = p[j] &- 48
                if d >= 10 { break }
                if e < 100_000 { e = e * 10 + Int(d) }
                j += 1
            }
            if j == expStart { return .invalid }
            exp10 += expNegative ? -e : e
        }
        if j - start > maxTokenLength { return .invalid }
        i = j
        if mantissa == 0 && digits <= 19 {
            return .value(negative ? -0.0 : 0.0)
        }
        if digits <= 19 && mantissa <= (1 << 53) && exp10 >= -22 && exp10 <= 22 {
            var v = Double(mantissa)
            if exp10 >= 0 { v *= powersOfTen[exp10] } else { v /= powersOfTen[-exp10] }
            return .value(negative ? -v : v)
        }
        // Slow path: exact conversion by the standard library.
        let text = String(decoding: UnsafeBufferPointer(start: p + start, count: j - start), as: UTF8.self)
        if let v = Double(text) { return .value(v) }
        // Grammar was valid, so the only reason left is overflow.
        return .value(negative ? -Double.infinity : .infinity)
    }
}
