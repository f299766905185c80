import SignatureKit

/// Records a signature as the pen moves, and gives the outline to draw while it does.
///
/// The live preview comes from SignatureKit's own ``SignatureReconstructor``, the code the server
/// renders the stored PNG with, so what the recipient sees while signing is the proof
/// (SignatureKit's tests hold incremental output equal to the batch outline). Times are
/// milliseconds from the first point of the document, as countersign.ink/v1 wants them.
///
/// ```swift
/// var recorder = InkRecorder(canvas: CanvasSize(width: 600, height: 200))
/// recorder.beginStroke()
/// let update = recorder.add(x: 10, y: 20, t: 0)      // draw recorder.outline
/// recorder.endStroke()
/// let ink = try recorder.finish()                      // validated, canonical ink/v1
/// ```
public struct InkRecorder: Sendable {
    /// The drawing surface, in the units the points arrive in (points / CSS px).
    public let canvas: CanvasSize
    /// The limits the server applies (the same `InkLimits` defaults unless the deployment changed them).
    public let limits: InkLimits

    private var reconstructor = SignatureReconstructor()
    private var strokes: [Stroke] = []
    private var openStroke: [InkPoint]?
    /// Every subpath finalised so far: it never changes again, so a view can cache its drawing.
    public private(set) var finalizedOutline: [PathElement] = []
    /// The shape ending the open stroke, replaced on every point.
    public private(set) var pendingOutline: [PathElement] = []

    /// A recorder for an empty canvas.
    public init(canvas: CanvasSize, limits: InkLimits = .default) {
        self.canvas = canvas
        self.limits = limits
    }

    /// `true` between ``beginStroke()`` and ``endStroke()``.
    public var isStrokeOpen: Bool { openStroke != nil }

    /// The outline to draw now: the finalised subpaths and the open stroke's pending shape.
    public var outline: Outline { Outline(elements: finalizedOutline + pendingOutline) }

    /// The document so far (an open stroke counts with the points it has).
    public var document: InkDocument {
        var all = strokes
        if let openStroke, !openStroke.isEmpty { all.append(Stroke(points: openStroke)) }
        return InkDocument(canvas: canvas, strokes: all)
    }

    /// The pen touched the surface. A stroke still open is ended first.
    public mutating func beginStroke() {
        if isStrokeOpen { endStroke() }
        openStroke = []
    }

    /// One sample of the pen: position in canvas units, time in ms since the first point,
    /// pressure in 0…1 when the device reports it. Opens a stroke if none is open.
    @discardableResult
    public mutating func add(x: Double, y: Double, t: Double, pressure: Double? = nil) -> SignatureReconstructor.Update {
        if openStroke == nil { openStroke = [] }
        let point = InkPoint(x: x, y: y, t: t, pressure: pressure)
        openStroke?.append(point)
        let update = reconstructor.add(point)
        if let finalized = update.finalized { finalizedOutline += finalized }
        pendingOutline = update.temporary
        return update
    }

    /// The pen left the surface: the open stroke's pending shape is finalised as it is.
    public mutating func endStroke() {
        guard let points = openStroke else { return }
        if let last = reconstructor.endStroke() { finalizedOutline += last }
        pendingOutline = []
        if !points.isEmpty { strokes.append(Stroke(points: points)) }
        openStroke = nil
    }

    /// Starts over (the recipient pressed "clear").
    public mutating func clear() {
        self = InkRecorder(canvas: canvas, limits: limits)
    }

    /// The server's checks, before anything is queued: `blank_signature`, `out_of_canvas`,
    /// `time_backwards`, … with the same codes and limits as the server's 422 (``InkError``).
    public func validate() throws(InkError) {
        try InkValidator.validate(document, limits: limits)
    }

    /// Ends an open stroke, validates, and returns the canonical countersign.ink/v1 bytes: the
    /// exact form the server stores, so the preview and the stored PNG come from the same numbers.
    public mutating func finish() throws(InkError) -> CapturedInk {
        endStroke()
        let canonical = try CanonicalInk(document, parser: InkParser(limits: limits))
        return CapturedInk(json: canonical.bytes, document: canonical.document)
    }
}
