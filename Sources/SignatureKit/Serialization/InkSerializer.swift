/// Writes an ``InkDocument`` as canonical `countersign.ink/v1` JSON.
///
/// Canonical form: members in the order `format`, `canvas`, `strokes`; no whitespace;
/// coordinates, times and canvas size rounded to 3 decimals and pressure to 4 (half away from
/// zero), trailing zeros dropped, `-0` written as `0`, pressure written only when present.
/// The output depends on nothing but the document, so identical documents give identical
/// bytes, and `serialize(parse(serialize(d))) == serialize(d)`.
///
/// Meant for validated documents: non-finite values (which validation rejects) are written as 0.
public enum InkSerializer {
    /// Decimal places for coordinates, times and canvas size.
    public static let coordinateDecimals = 3
    /// Decimal places for pressure.
    public static let pressureDecimals = 4

    /// The canonical JSON bytes of `doc`.
    public static func serialize(_ doc: InkDocument) -> [UInt8] {
        let numberBytes = Formatting.maxLength + 1
        let capacity = 96 + doc.strokes.count * 3 + doc.pointCount * (4 * numberBytes + 3)
        return [UInt8](unsafeUninitializedCapacity: capacity) { buf, initialized in
            let p = buf.baseAddress!
            var n = 0
            @inline(__always) func put(_ s: StaticString) {
                let c = s.utf8CodeUnitCount
                (p + n).update(from: s.utf8Start, count: c)
                n += c
            }
            @inline(__always) func byte(_ b: UInt8) {
                p[n] = b
                n += 1
            }
            @inline(__always) func number(_ v: Double, _ decimals: Int) {
                n += Formatting.write(v, decimals: decimals, to: p + n)
            }
            put(#"{"format":"countersign.ink/v1","canvas":{"width":"#)
            number(doc.canvas.width, coordinateDecimals)
            put(#","height":"#)
            number(doc.canvas.height, coordinateDecimals)
            put(#"},"strokes":["#)
            for (si, stroke) in doc.strokes.enumerated() {
                if si > 0 { byte(UInt8(ascii: ",")) }
                byte(UInt8(ascii: "["))
                for (pi, pt) in stroke.points.enumerated() {
                    if pi > 0 { byte(UInt8(ascii: ",")) }
                    byte(UInt8(ascii: "["))
                    number(pt.x, coordinateDecimals)
                    byte(UInt8(ascii: ","))
                    number(pt.y, coordinateDecimals)
                    byte(UInt8(ascii: ","))
                    number(pt.t, coordinateDecimals)
                    if let pr = pt.pressure {
                        byte(UInt8(ascii: ","))
                        number(pr, pressureDecimals)
                    }
                    byte(UInt8(ascii: "]"))
                }
                byte(UInt8(ascii: "]"))
            }
            put("]}")
            initialized = n
        }
    }

    /// The canonical JSON as a string.
    public static func string(_ doc: InkDocument) -> String {
        String(decoding: serialize(doc), as: UTF8.self)
    }
}
