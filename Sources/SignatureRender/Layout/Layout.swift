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
    /// - Parameter inkBounds: the reconstructed outline's bounds in canvas units (used only with
    ///   ``LayoutOptions/trim``; `nil` or empty falls back to the canvas).
    /// - Throws: `invalid_layout` for a non-positive/non-finite scale, size or margin, or a canvas
    ///   without area; `output_too_large` when the result exceeds the maximum pixel size.
    public init(canvas: CanvasSize, inkBounds: Rect?, options o: LayoutOptions) throws(RenderOptionsError) {
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
            s = o.scale
            pw = (sw * s + 2 * margin - 1e-9).rounded(.up)
            ph = (sh * s + 2 * margin - 1e-9).rounded(.up)
        case (let w?, nil):
            let avail = Double(w) - 2 * margin
            guard avail > 0 else { throw RenderOptionsError(.invalidLayout, "width \(w) leaves no room inside the margin") }
            s = avail / sw
            pw = Double(w)
            ph = (sh * s + 2 * margin - 1e-9).rounded(.up)
        case (nil, let h?):
            let avail = Double(h) - 2 * margin
            guard avail > 0 else { throw RenderOptionsError(.invalidLayout, "height \(h) leaves no room inside the margin") }
            s = avail / sh
            pw = (sw * s + 2 * margin - 1e-9).rounded(.up)
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
}
