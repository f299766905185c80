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
        var out: [UInt8] = []
        out.reserveCapacity(64 + doc.pointCount * 24)
        out.append(contentsOf: #"{"format":"countersign.ink/v1","canvas":{"width":"#.utf8)
        Formatting.append(doc.canvas.width, decimals: coordinateDecimals, to: &out)
        out.append(contentsOf: #","height":"#.utf8)
        Formatting.append(doc.canvas.height, decimals: coordinateDecimals, to: &out)
        out.append(contentsOf: #"},"strokes":["#.utf8)
        for (si, stroke) in doc.strokes.enumerated() {
            if si > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            for (pi, p) in stroke.points.enumerated() {
                if pi > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "["))
                Formatting.append(p.x, decimals: coordinateDecimals, to: &out)
                out.append(UInt8(ascii: ","))
                Formatting.append(p.y, decimals: coordinateDecimals, to: &out)
                out.append(UInt8(ascii: ","))
                Formatting.append(p.t, decimals: coordinateDecimals, to: &out)
                if let pr = p.pressure {
                    out.append(UInt8(ascii: ","))
                    Formatting.append(pr, decimals: pressureDecimals, to: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// The canonical JSON as a string.
    public static func string(_ doc: InkDocument) -> String {
        String(decoding: serialize(doc), as: UTF8.self)
    }
}
