import PNG
import SignatureKit

/// Everything that shapes a rendered signature.
public struct RenderOptions: Sendable, Equatable {
    /// Output size, scale, trim and margin (default: the canvas × 2).
    public var layout: LayoutOptions
    /// Reconstruction parameters (default: UberSignature's).
    public var reconstruction: ReconstructionOptions
    /// Ink colour (default black).
    public var color: RGBColor
    /// Background (default transparent).
    public var background: RenderBackground
    /// PNG encoder settings (defaults chosen by measurement: docs/decisions/0001-png-pixel-format.md, 0002-run-length-deflate.md).
    public var png: PNGOptions
    /// Largest number of output pixels (width × height) a PNG render may have, on top of the
    /// per-side limits in ``LayoutOptions``. A PNG render works in bands (about 80 bytes per
    /// pixel of width) and never holds the whole image; ``rasterize(_:options:)`` returns
    /// 1 byte per pixel, so the default 2,500,000 keeps that mask under 2.5 MB.
    public var maxPixels: Int
    /// Curve flattening tolerance in output pixels (default 0.1).
    public var tolerance: Double

    /// Creates options; every parameter has the documented default.
    public init(
        layout: LayoutOptions = LayoutOptions(),
        reconstruction: ReconstructionOptions = ReconstructionOptions(),
        color: RGBColor = .black,
        background: RenderBackground = .transparent,
        png: PNGOptions = .default,
        maxPixels: Int = 2_500_000,
        tolerance: Double = 0.1
    ) {
        self.layout = layout
        self.reconstruction = reconstruction
        self.color = color
        self.background = background
        self.png = png
        self.maxPixels = maxPixels
        self.tolerance = tolerance
    }
}

extension RenderOptions {
    /// These options with ``LayoutOptions/scaleDownToFit`` resolved by `layout` (made from them):
    /// the scale it used and no fitting, so the same layout follows without it. Options that do
    /// not fit come back unchanged.
    public func reproducing(_ layout: Layout) -> RenderOptions {
        guard self.layout.scaleDownToFit else { return self }
        var fixed = self
        fixed.layout.scaleDownToFit = false
        if fixed.layout.width == nil, fixed.layout.height == nil { fixed.layout.scale = layout.transform.scale }
        return fixed
    }
}
