import SignatureKit

/// Writes a signature outline as a standalone SVG document.
///
/// The output is deterministic: fixed decimals (``Options/decimals``), no locale, no
/// timestamps, so identical input gives byte-identical SVG. The `viewBox` is in output pixels
/// and equals `width`/`height`, so the SVG and the PNG of the same ``Layout`` line up.
public enum SVGWriter {
    /// Styling of the SVG.
    public struct Options: Sendable, Equatable {
        /// Ink colour. Default black.
        public var color: RGBColor
        /// Background colour, or `nil` for transparent (default).
        public var background: RGBColor?
        /// Decimal places for coordinates (0...6). Default 2.
        public var decimals: Int

        /// Creates options; all parameters have the documented defaults.
        public init(color: RGBColor = .black, background: RGBColor? = nil, decimals: Int = 2) {
            self.color = color
            self.background = background
            self.decimals = decimals
        }
    }

    /// The SVG document for an outline already in output pixels (see ``RenderGeometry``).
    public static func svg(_ geometry: RenderGeometry, options: Options = Options()) -> [UInt8] {
        let w = geometry.layout.pixelWidth, h = geometry.layout.pixelHeight
        var out: [UInt8] = []
        out.reserveCapacity(256 + geometry.outline.elements.count * 24)
        out.append(contentsOf: #"<svg xmlns="http://www.w3.org/2000/svg" width=""#.utf8)
        out.append(contentsOf: String(w).utf8)
        out.append(contentsOf: #"" height=""#.utf8)
        out.append(contentsOf: String(h).utf8)
        out.append(contentsOf: #"" viewBox="0 0 "#.utf8)
        out.append(contentsOf: String(w).utf8)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: String(h).utf8)
        out.append(contentsOf: "\">\n".utf8)
        if let bg = options.background {
            out.append(contentsOf: #"<rect width="100%" height="100%" fill=""#.utf8)
            out.append(contentsOf: bg.hex.utf8)
            out.append(contentsOf: "\"/>\n".utf8)
        }
        if !geometry.outline.isEmpty {
            out.append(contentsOf: #"<path fill=""#.utf8)
            out.append(contentsOf: options.color.hex.utf8)
            out.append(contentsOf: #"" fill-rule="nonzero" d=""#.utf8)
            appendPathData(geometry.outline.elements, decimals: options.decimals, to: &out)
            out.append(contentsOf: "\"/>\n".utf8)
        }
        out.append(contentsOf: "</svg>\n".utf8)
        return out
    }

    /// The SVG document as a string.
    public static func string(_ geometry: RenderGeometry, options: Options = Options()) -> String {
        String(decoding: svg(geometry, options: options), as: UTF8.self)
    }

    /// Reconstructs, lays out and writes `document` in one call.
    public static func render(_ document: InkDocument, layout: LayoutOptions = LayoutOptions(),
                              reconstruction: ReconstructionOptions = ReconstructionOptions(),
                              options: Options = Options()) throws(RenderOptionsError) -> [UInt8] {
        let g = try RenderGeometry(document: document, layout: layout, reconstruction: reconstruction)
        return svg(g, options: options)
    }

    /// Appends SVG path data (`M x,y L ... Q ... C ... Z`) for `elements`. Each element is written
    /// into a small buffer and appended once: an export writes every proof's SVG, and appending
    /// number by number was most of the writer's cost.
    public static func appendPathData(_ elements: [PathElement], decimals: Int, to out: inout [UInt8]) {
        // A cubic, the longest element: a letter, three points of two numbers, a comma, a space.
        let longest = 1 + 3 * (2 * Formatting.maxLength + 1) + 2
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longest) { buffer in
            let base = buffer.baseAddress!
            var count = 0
            @inline(__always) func byte(_ value: UInt8) {
                base[count] = value
                count += 1
            }
            @inline(__always) func pt(_ p: Point) {
                count += Formatting.write(p.x, decimals: decimals, to: base + count)
                byte(UInt8(ascii: ","))
                count += Formatting.write(p.y, decimals: decimals, to: base + count)
            }
            for e in elements {
                count = 0
                switch e {
                case .move(let p):
                    byte(UInt8(ascii: "M")); pt(p)
                case .line(let p):
                    byte(UInt8(ascii: "L")); pt(p)
                case .quad(let c, let p):
                    byte(UInt8(ascii: "Q")); pt(c); byte(UInt8(ascii: " ")); pt(p)
                case .cubic(let c1, let c2, let p):
                    byte(UInt8(ascii: "C")); pt(c1); byte(UInt8(ascii: " ")); pt(c2)
                    byte(UInt8(ascii: " ")); pt(p)
                case .close:
                    byte(UInt8(ascii: "Z"))
                }
                out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
            }
        }
    }
}
