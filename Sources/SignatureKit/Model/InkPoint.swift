/// One sample of the pen.
public struct InkPoint: Sendable, Equatable {
    /// Horizontal position in canvas units (origin left).
    public var x: Double
    /// Vertical position in canvas units (origin top, growing downwards).
    public var y: Double
    /// Time in milliseconds, by convention relative to the first point of the document.
    public var t: Double
    /// Pen pressure in `0...1`, or `nil` when the device did not report it.
    public var pressure: Double?

    /// Creates a point.
    public init(x: Double, y: Double, t: Double, pressure: Double? = nil) {
        self.x = x
        self.y = y
        self.t = t
        self.pressure = pressure
    }
}
