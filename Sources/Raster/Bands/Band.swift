/// One band's cells, in band-relative rows.
struct Band {
    let acc: UnsafeMutablePointer<Float>
    let flags: UnsafeMutablePointer<UInt8>
    let ink: UnsafeMutablePointer<UInt8>
    let blocksPerRow: Int
    let stride: Int
    let w: Float

    /// Accumulates a segment inside [0, w] × [0, bandHeight] (band-relative y) with y0 < y1.
    @inline(__always)
    func span(_ x0: Float, _ y0: Float, _ x1: Float, _ y1: Float, _ dir: Float) {
        let dxdy = (x1 - x0) / (y1 - y0)
        var x = x0
        let yStart = Int(y0)
        let yEnd = Cells.ceil(y1)
        var y = yStart
        while y < yEnd {
            let fy = Float(y)
            let dy = min(fy + 1, y1) - max(fy, y0)
            let xnext = y == yEnd - 1 ? x1 : min(max(x + dxdy * dy, 0), w)
            let d = dy * dir
            let row = acc + y * stride
            let xa = min(x, xnext), xb = max(x, xnext)
            // xa, xb >= 0: truncation is the floor (and no libm call, unlike `rounded`).
            let xai = Int(xa)
            let xaf = Float(xai)
            let xbi = Cells.ceil(xb)
            let xbc = Float(xbi)
            if xbi <= xai + 1 {
                // The segment stays within one pixel column on this row.
                let xmf = 0.5 * (x + xnext) - xaf
                row[xai] += d - d * xmf
                row[xai + 1] += d * xmf
            } else {
                let s = 1 / (xb - xa)
                let x0f = xa - xaf
                let a0 = 0.5 * s * (1 - x0f) * (1 - x0f)
                let x1f = xb - xbc + 1
                let am = 0.5 * s * x1f * x1f
                row[xai] += d * a0
                if xbi == xai + 2 {
                    row[xai + 1] += d * (1 - a0 - am)
                } else {
                    let a1 = s * (1.5 - x0f)
                    row[xai + 1] += d * (a1 - a0)
                    let ds = d * s
                    var xi = xai + 2
                    while xi < xbi - 1 {
                        row[xi] += ds
                        xi += 1
                    }
                    let a2 = a1 + Float(xbi - xai - 3) * s
                    row[xbi - 1] += d * (1 - a2 - am)
                }
                row[xbi] += d * am
            }
            ink[y] = 1
            let flags = flags + y * blocksPerRow
            let b0 = xai >> Cells.blockShift, b1 = (xai + 1) >> Cells.blockShift
            flags[b0] = 1
            flags[b1] = 1
            if xbi > xai + 1 {
                var b = b1 + 1
                let bEnd = xbi >> Cells.blockShift
                while b <= bEnd {
                    flags[b] = 1
                    b += 1
                }
            }
            x = xnext
            y += 1
        }
    }
}
