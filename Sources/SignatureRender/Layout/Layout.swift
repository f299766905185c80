import SignatureKit

/// The output raster size and the canvas-to-pixel transform, computed from ``LayoutOptions``.
public struct Layout: Sendable, Equatable {
    /// Output width in pixels (at least 1).
    public var pixelWidth: Int
    /// Output height in pixels (at least 1).
    public var pixelHeight: Int
    /// Maps canvas units to output pixels.
    public var transform: Transform

    /// Creates a layout directly.
    public init(pixelWidth: Int, pixelHeight: Int, transform: Transform) {
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.transform = transform
    }

    /// Computes the layout for a canvas and the outline bounds of its ink.
    ///
    /// - Parameters:
    ///   - inkBounds: the reconstructed outline's bounds in canvas units (used only with
    ///     ``LayoutOptions/trim``; `nil` or empty falls back to the canvas).
    ///   - maxPixels: the most pixels (width × height) the output may have; only
    ///     ``LayoutOptions/scaleDownToFit`` reads it (a PNG render checks its own cap).
    /// - Throws: `invalid_layout` for a non-positive/non-finite scale, size or margin, or a canvas
    ///   without area; `output_too_large` when the result exceeds the maximum pixel size.
    public init(canvas: CanvasSize, inkBounds: Rect?, options o: LayoutOptions, maxPixels: Int = .max) throws(RenderOptionsError) {
        guard o.scale.isFinite, o.scale > 0 else {
            throw RenderOptionsError(.invalidLayout, "scale must be a positive number, got \(o.scale)")
        }
        guard o.margin.isFinite, o.margin >= 0 else {
            throw RenderOptionsError(.invalidLayout, "margin must be zero or positive, got \(o.margin)")
        }
        if let w = o.width, w <= 0 { throw RenderOptionsError(.invalidLayout, "width must be positive, got \(w)") }
        if let h = o.height, h <= 0 { throw RenderOptionsError(.invalidLayout, "height must be positive, got \(h)") }
        guard canvas.width.isFinite, canvas.height.isFinite, canvas.width > 0, canvas.height > 0 else {
            throw RenderOptionsError(.invalidLayout, "canvas must have a positive finite size")
        }
        var source = Rect(minX: 0, minY: 0, maxX: canvas.width, maxY: canvas.height)
        var margin = 0.0
        if o.trim, let b = inkBounds, b.width > 0 || b.height > 0,
           b.minX.isFinite, b.maxX.isFinite, b.minY.isFinite, b.maxY.isFinite {
            source = b
            margin = o.margin
        }
        let sw = Swift.max(source.width, 1e-9), sh = Swift.max(source.height, 1e-9)
        let s: Double
        var pw: Double, ph: Double
        switch (o.width, o.height) {
        case (nil, nil):
            s = o.scaleDownToFit ? try Self.fittingScale(sw, sh, margin: margin, options: o, maxPixels: maxPixels) : o.scale
            pw = Self.pixels(sw, s, margin)
            ph = Self.pixels(sh, s, margin)
        case (let w?, nil):
            let avail = Double(w) - 2 * margin
            guard avail > 0 else { throw RenderOptionsError(.invalidLayout, "width \(w) leaves no room inside the margin") }
            s = avail / sw
            pw = Double(w)
            ph = Self.pixels(sh, s, margin)
        case (nil, let h?):
            let avail = Double(h) - 2 * margin
            guard avail > 0 else { throw RenderOptionsError(.invalidLayout, "height \(h) leaves no room inside the margin") }
            s = avail / sh
            pw = Self.pixels(sw, s, margin)
            ph = Double(h)
        case (let w?, let h?):
            let aw = Double(w) - 2 * margin, ah = Double(h) - 2 * margin
            guard aw > 0, ah > 0 else { throw RenderOptionsError(.invalidLayout, "\(w)×\(h) leaves no room inside the margin") }
            s = Swift.min(aw / sw, ah / sh)
            pw = Double(w)
            ph = Double(h)
        }
        pw = Swift.max(pw, 1)
        ph = Swift.max(ph, 1)
        guard pw.isFinite, ph.isFinite, pw <= Double(o.maxPixelWidth), ph <= Double(o.maxPixelHeight) else {
            throw RenderOptionsError(.outputTooLarge,
                           "output of \(pw.isFinite ? String(Int(pw)) : "∞")×\(ph.isFinite ? String(Int(ph)) : "∞") pixels exceeds the maximum \(o.maxPixelWidth)×\(o.maxPixelHeight)")
        }
        pixelWidth = Int(pw)
        pixelHeight = Int(ph)
        // Centre the scaled source inside the output.
        let tx = (pw - source.width * s) / 2 - source.minX * s
        let ty = (ph - source.height * s) / 2 - source.minY * s
        transform = Transform(scale: s, tx: tx, ty: ty)
    }

    /// Output pixels along one side: `extent` canvas units at scale `s` plus the margin on both
    /// sides, rounded up so ink is never cut.
    static func pixels(_ extent: Double, _ s: Double, _ margin: Double) -> Double {
        (extent * s + 2 * margin - 1e-9).rounded(.up)
    }

    /// `o.scale` when a `width` × `height` source fits the limits at it, else the largest scale in
    /// thousandths (so it reads back from stored JSON exactly and stays readable) that fits: the
    /// per-side maximums and `maxPixels` in all. Deterministic: the same sizes give the same scale.
    /// - Throws: `output_too_large` when not even 0.001 fits (the margin alone is too large).
    static func fittingScale(_ width: Double, _ height: Double, margin: Double, options o: LayoutOptions,
                             maxPixels: Int) throws(RenderOptionsError) -> Double {
        let (maxW, maxH, maxArea) = (Double(o.maxPixelWidth), Double(o.maxPixelHeight), Double(maxPixels))
        func fits(_ s: Double) -> Bool {
            let pw = Swift.max(pixels(width, s, margin), 1), ph = Swift.max(pixels(height, s, margin), 1)
            return pw <= maxW && ph <= maxH && pw * ph <= maxArea
        }
        if fits(o.scale) { return o.scale }
        // The exact bound without rounding: each side, and the area (width·s + 2m)(height·s + 2m) ≤ maxArea.
        let a = width * height, b = 2 * margin * (width + height), c = 4 * margin * margin - maxArea
        let byArea = (-b + (b * b - 4 * a * c).squareRoot()) / (2 * a)
        let bound = Swift.min(o.scale, (maxW - 2 * margin) / width, (maxH - 2 * margin) / height, byArea)
        // Rounding pixels up can cost a thousandth or two below the bound.
        var thousandths = bound.isFinite && bound > 0 ? Int((Swift.min(bound, 1e9) * 1000).rounded(.down)) : 0
        while thousandths > 0, !fits(Double(thousandths) / 1000) { thousandths -= 1 }
        guard thousandths > 0 else {
            throw RenderOptionsError(.outputTooLarge, "no scale fits a \(width)×\(height) source with a margin of \(margin) pixels "
                                     + "within \(o.maxPixelWidth)×\(o.maxPixelHeight) and \(maxPixels) pixels")
        }
        return Double(thousandths) / 1000
    }
}
