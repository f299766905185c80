import SignatureKit

/// Turns an ``InkDocument`` into pixels or SVG: reconstruct → outline → layout → raster → PNG.
public enum SignatureRenderer {
    /// Reconstructs and lays out `ink` (the shared first half of PNG and SVG output).
    public static func geometry(_ ink: InkDocument, options: RenderOptions = RenderOptions()) throws(RenderError) -> RenderGeometry {
        do {
            return try RenderGeometry(document: ink, layout: options.layout, reconstruction: options.reconstruction,
                                      maxPixels: options.maxPixels)
        } catch {
            throw .options(error)
        }
    }

    /// Renders `ink` as an SVG document (same layout and outline as the PNG).
    public static func renderSVG(_ ink: InkDocument, options: RenderOptions = RenderOptions()) throws(RenderError) -> String {
        String(decoding: try renderSVGBytes(ink, options: options), as: UTF8.self)
    }

    /// Renders `ink` as SVG bytes (UTF-8).
    public static func renderSVGBytes(_ ink: InkDocument, options: RenderOptions = RenderOptions()) throws(RenderError) -> [UInt8] {
        let g = try geometry(ink, options: options)
        return SVGWriter.svg(g, options: SVGWriter.Options(
            color: options.color, background: options.background == .white ? .white : nil))
    }
}
