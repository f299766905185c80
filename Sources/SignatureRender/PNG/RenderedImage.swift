/// A rendered PNG.
public struct RenderedImage: Sendable, Equatable {
    /// The PNG file.
    public var png: [UInt8]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    public init(png: [UInt8], width: Int, height: Int) {
        self.png = png
        self.width = width
        self.height = height
    }
}
