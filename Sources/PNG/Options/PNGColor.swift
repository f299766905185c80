/// An sRGB colour, 8 bits per channel.
public struct PNGColor: Sendable, Equatable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let black = PNGColor(red: 0, green: 0, blue: 0)
    public static let white = PNGColor(red: 255, green: 255, blue: 255)

    /// Whether the colour is a shade of grey (it can then be written as a grey image).
    public var isGray: Bool { red == green && green == blue }
}
