/// Constants and the 8-bit conversion shared by accumulation and resolving.
enum Cells {
    static let blockShift = 4
    static let blockSize = 1 << blockShift

    /// Largest number of line segments one curve is flattened into.
    static let maxCurveSegments: Float = 2048

    @inline(__always)
    static func byte(_ s: Float) -> UInt8 {
        let v = Swift.min(Swift.abs(s), 1) * 255 + 0.5
        return UInt8(v)
    }

    /// ``byte(_:)`` of four sums at once, as the four bytes of the result (lowest = first):
    /// the same arithmetic (|s| clamped to 1, × 255, + 0.5, truncated) in SSE registers, with the
    /// truncation done exactly by the 2^23 rounding trick instead of four checked conversions.
    @inline(__always)
    static func bytes(_ v: SIMD4<Float>) -> UInt32 {
        let big = SIMD4<Float>(repeating: 8_388_608)  // 2^23: adding it rounds to an integer
        let m = unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7FFF_FFFF, to: SIMD4<Float>.self)
        let a = m.replacing(with: 1, where: m .> 1) * 255 + 0.5  // in [0.5, 255.5]
        let r = (a + big) - big  // a rounded to the nearest integer
        let f = r.replacing(with: r - 1, where: r .> a)  // rounded down: the truncation of a
        return unsafeBitCast(
            SIMD4<UInt8>(truncatingIfNeeded: unsafeBitCast(f + big, to: SIMD4<UInt32>.self)), to: UInt32.self)
    }

    /// The ceiling of a non-negative value, without a libm call.
    @inline(__always)
    static func ceil(_ v: Float) -> Int {
        let t = Int(v)
        return Float(t) < v ? t + 1 : t
    }
}
