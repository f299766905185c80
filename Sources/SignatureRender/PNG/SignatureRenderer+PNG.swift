import PNG
import Raster
import SignatureKit
import Synchronization

/// The PNG half: rasterise the laid-out outline and encode it.
extension SignatureRenderer {
    /// Renders `ink` to a PNG.
    public static func renderPNG(_ ink: InkDocument, options: RenderOptions = RenderOptions()) throws(RenderError) -> RenderedImage {
        try renderPNG(geometry(ink, options: options), options: options)
    }

    /// Renders `ink` to a PNG and reports in `timings` how long the two halves took: reconstruct,
    /// lay out and rasterise (``RenderTimings/render``), then PNG encoding (``RenderTimings/encode``).
    /// Rasterising and encoding are interleaved band by band; each band's time goes to its half.
    public static func renderPNG(_ ink: InkDocument, options: RenderOptions = RenderOptions(),
                                 timings: inout RenderTimings) throws(RenderError) -> RenderedImage {
        try timedPNG(ink, options: options, timings: &timings).image
    }

    /// Renders `ink` to a PNG at `options`' scale or, when that image would exceed the pixel cap
    /// (``RenderOptions/maxPixels``) or a side's maximum, at the largest scale that fits
    /// (``LayoutOptions/scaleDownToFit``), with `timings` as in ``renderPNG(_:options:timings:)``.
    /// Also returns the options that reproduce the image without fitting: `options` itself when it
    /// fits, else `options` with the scale used. Store those (``StoredRenderOptions/json(_:)``), so a
    /// re-render of the stored ink gives the same pixels.
    public static func renderFittedPNG(_ ink: InkDocument, options: RenderOptions = RenderOptions(),
                                       timings: inout RenderTimings) throws(RenderError) -> (image: RenderedImage, options: RenderOptions) {
        var fitting = options
        fitting.layout.scaleDownToFit = true
        return try timedPNG(ink, options: fitting, timings: &timings)
    }

    /// The geometry, then the PNG; the geometry's time goes to ``RenderTimings/render``.
    private static func timedPNG(_ ink: InkDocument, options: RenderOptions,
                                 timings: inout RenderTimings) throws(RenderError) -> (image: RenderedImage, options: RenderOptions) {
        let clock = ContinuousClock()
        let start = clock.now
        let laidOut = try geometry(ink, options: options)
        let geometryTime = clock.now - start
        let used = options.reproducing(laidOut.layout)
        let image = try renderPNG(laidOut, options: used, timings: &timings)
        timings.render += geometryTime
        return (image, used)
    }

    /// Renders already computed geometry to a PNG.
    public static func renderPNG(_ geometry: RenderGeometry, options: RenderOptions = RenderOptions()) throws(RenderError) -> RenderedImage {
        var ignored = RenderTimings()
        return try renderPNG(geometry, options: options, timings: &ignored)
    }

    /// Renders already computed geometry to a PNG; `timings.render` is the rasterising alone.
    ///
    /// The PNG pipeline: the outline is flattened into the rasteriser, which resolves it in bands of
    /// ``Raster/Rasterizer/bandHeight`` rows straight into libpng (``PNG/PNGRowWriter``), so the
    /// full coverage mask never exists in memory. Same bytes as ``rasterize(_:options:)`` followed
    /// by ``PNG/PNGEncoder``.
    public static func renderPNG(_ geometry: RenderGeometry, options: RenderOptions = RenderOptions(),
                                 timings: inout RenderTimings) throws(RenderError) -> RenderedImage {
        let w = geometry.layout.pixelWidth, h = geometry.layout.pixelHeight
        try checkSize(width: w, height: h, options: options)
        let clock = ContinuousClock()
        let t0 = clock.now
        let writer: PNGRowWriter
        do {
            writer = try PNGRowWriter(
                width: w, height: h, color: pngColor(options.color),
                background: options.background == .white ? .white : .transparent, options: options.png)
        } catch {
            throw .png(error)
        }
        let t1 = clock.now
        var raster = spare.withLock { $0.take() } ?? Rasterizer(width: w, height: h)
        raster.reset(width: w, height: h)
        raster.tolerance = options.tolerance
        raster.fill(path(geometry.outline))
        var encoding = t1 - t0
        let png: [UInt8]
        do {
            try raster.takeRows { (_, rows) throws(PNGError) in
                let a = clock.now  // two clock reads per band of rows: negligible next to the encoding
                try writer.write(rows: rows)
                encoding += clock.now - a
            }
            spare.withLock { $0 = raster }
            let a = clock.now
            png = try writer.finish()
            encoding += clock.now - a
        } catch {
            spare.withLock { $0 = raster }
            throw .png(error)
        }
        timings = RenderTimings(render: (clock.now - t0) - encoding, encode: encoding)
        return RenderedImage(png: png, width: w, height: h)
    }

    /// Encodes a coverage mask from ``rasterize(_:options:)`` as PNG in the options' colour and background.
    public static func encodePNG(_ alpha: [UInt8], width: Int, height: Int, options: RenderOptions) throws(RenderError) -> [UInt8] {
        do {
            return try PNGEncoder.encode(
                alpha: alpha, width: width, height: height, color: pngColor(options.color),
                background: options.background == .white ? .white : .transparent, options: options.png)
        } catch {
            throw .png(error)
        }
    }

    /// The 8-bit coverage mask of `geometry` (`pixelWidth × pixelHeight` bytes, row-major).
    public static func rasterize(_ geometry: RenderGeometry, options: RenderOptions = RenderOptions()) -> [UInt8] {
        let w = geometry.layout.pixelWidth, h = geometry.layout.pixelHeight
        // Reuse a cached rasteriser when one is free: its segment and band buffers are already
        // allocated and zero. Concurrent renders each get their own.
        var raster = spare.withLock { $0.take() } ?? Rasterizer(width: w, height: h)
        raster.reset(width: w, height: h)
        raster.tolerance = options.tolerance
        raster.fill(path(geometry.outline))
        let coverage = raster.takeCoverage()
        spare.withLock { $0 = raster }
        return coverage
    }

    /// One cleared rasteriser kept between renders (its buffers stay at the largest size used,
    /// a band of the widest image rendered plus the segments of the largest outline).
    private static let spare = Mutex<Rasterizer?>(nil)

    /// The outline as a ``Raster/Path`` (same coordinates).
    public static func path(_ outline: Outline) -> Path {
        var p = Path()
        p.reserveCapacity(outline.elements.count)
        for e in outline.elements {
            switch e {
            case .move(let a): p.move(a.x, a.y)
            case .line(let a): p.line(a.x, a.y)
            case .quad(let c, let a): p.quad(c.x, c.y, a.x, a.y)
            case .cubic(let c1, let c2, let a): p.cubic(c1.x, c1.y, c2.x, c2.y, a.x, a.y)
            case .close: p.close()
            }
        }
        return p
    }

    static func checkSize(width: Int, height: Int, options: RenderOptions) throws(RenderError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > options.maxPixels || width > Rasterizer.maxDimension || height > Rasterizer.maxDimension {
            throw .options(RenderOptionsError(
                .outputTooLarge,
                "output of \(width)×\(height) pixels exceeds the maximum of \(options.maxPixels) pixels"))
        }
    }

    static func pngColor(_ c: RGBColor) -> PNGColor {
        PNGColor(red: c.red, green: c.green, blue: c.blue)
    }
}
