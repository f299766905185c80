/// The size of the drawing surface in canvas units (CSS pixels / points for web captures).
public struct CanvasSize: Sendable, Equatable, Hashable {
    /// Width in canvas units.
    public var width: Double
    /// Height in canvas units.
    public var height: Double

    /// Creates a canvas size.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}
