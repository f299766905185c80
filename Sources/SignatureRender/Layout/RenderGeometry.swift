import SignatureKit

/// Everything a renderer needs for one signature: the layout and the outline already in
/// output pixels. PNG and SVG output both start from this, so they always agree.
public struct RenderGeometry: Sendable {
    /// Output size and the canvas-to-pixel transform.
    public var layout: Layout
    /// The reconstructed outline in output pixels (fill with the non-zero rule).
    public var outline: Outline

    /// Reconstructs `document` and lays it out (`maxPixels`: the pixel cap a fitting layout keeps to).
    /// - Throws: `invalid_layout` or `output_too_large` (see ``Layout/init(canvas:inkBounds:options:maxPixels:)``).
    public init(document: InkDocument, layout options: LayoutOptions = LayoutOptions(),
                reconstruction: ReconstructionOptions = ReconstructionOptions(), maxPixels: Int = .max) throws(RenderOptionsError) {
        let canvasOutline = SignatureReconstructor.outline(for: document, options: reconstruction)
        let layout = try Layout(canvas: document.canvas,
                                inkBounds: canvasOutline.isEmpty ? nil : canvasOutline.bounds, options: options, maxPixels: maxPixels)
        self.layout = layout
        self.outline = canvasOutline.transformed(by: layout.transform)
    }

    /// Creates geometry from parts.
    public init(layout: Layout, outline: Outline) {
        self.layout = layout
        self.outline = outline
    }
}
