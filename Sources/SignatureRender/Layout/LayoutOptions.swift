/// How canvas units map to output pixels (shared by PNG and SVG output).
///
/// - Neither ``width`` nor ``height``: the source rectangle × ``scale`` (default 2, so a
///   600×200 canvas gives 1200×400).
/// - ``width`` and/or ``height``: the source is scaled to fit, keeping its aspect ratio, and
///   centred; with only one given, the other follows from the aspect ratio. ``scale`` is
///   ignored then.
/// - ``trim``: the source rectangle is the ink's outline bounds instead of the canvas, with
///   ``margin`` pixels of space around it (an empty outline falls back to the canvas).
/// - ``scaleDownToFit`` (only without ``width`` and ``height``): when the source × ``scale``
///   would exceed ``maxPixelWidth``, ``maxPixelHeight`` or the pixel cap the layout is given,
///   the largest scale in thousandths that fits is used instead of refusing. The scale used is
///   the layout's `transform.scale`; store it (``StoredRenderOptions``) so a re-render with
///   that scale and no fitting gives the same image.
public struct LayoutOptions: Sendable, Equatable {
    /// Output width in pixels, or `nil`.
    public var width: Int?
    /// Output height in pixels, or `nil`.
    public var height: Int?
    /// Pixels per canvas unit when no size is given. Default 2.
    public var scale: Double
    /// Crop to the ink (plus ``margin``). Default `false`.
    public var trim: Bool
    /// Space around trimmed ink, in output pixels (only used with ``trim``). Default 16.
    public var margin: Double
    /// Largest allowed output width. Default 4096.
    public var maxPixelWidth: Int
    /// Largest allowed output height. Default 4096.
    public var maxPixelHeight: Int
    /// Lower ``scale`` to the largest that fits the limits instead of refusing. Default `false`.
    public var scaleDownToFit: Bool

    /// Creates layout options; all parameters have the documented defaults.
    public init(width: Int? = nil, height: Int? = nil, scale: Double = 2, trim: Bool = false,
                margin: Double = 16, maxPixelWidth: Int = 4096, maxPixelHeight: Int = 4096, scaleDownToFit: Bool = false) {
        self.width = width
        self.height = height
        self.scale = scale
        self.trim = trim
        self.margin = margin
        self.maxPixelWidth = maxPixelWidth
        self.maxPixelHeight = maxPixelHeight
        self.scaleDownToFit = scaleDownToFit
    }
}
