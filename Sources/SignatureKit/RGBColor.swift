/// An opaque sRGB colour with 8 bits per channel, written `#RRGGBB`.
public struct RGBColor: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Red channel.
    public var red: UInt8
    /// Green channel.
    public var green: UInt8
    /// Blue channel.
    public var blue: UInt8

    /// Creates a colour from its channels.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Black, the default ink.
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
    /// White, the optional background.
    public static let white = RGBColor(red: 255, green: 255, blue: 255)

    /// Parses `#RRGGBB` (the `#` is optional, hex digits in either case); `nil` otherwise.
    public init?(hex: String) {
        var bytes = Array(hex.utf8)
        if bytes.first == UInt8(ascii: "#") { bytes.removeFirst() }
        guard bytes.count == 6 else { return nil }
        var v: UInt32 = 0
        for b in bytes {
            guard let d = JSONScanner.hexValue(b) else { return nil }
            v = v << 4 | d
        }
        self.init(red: UInt8(v >> 16), green: UInt8((v >> 8) & 0xFF), blue: UInt8(v & 0xFF))
    }

    /// Parses `#RRGGBB`, throwing `invalid_color` with a clear message otherwise.
    public static func parse(_ text: String) throws(InkError) -> RGBColor {
        guard let c = RGBColor(hex: text) else {
            throw InkError(.invalidColor, "colour \"\(text.prefix(32))\" is not #RRGGBB")
        }
        return c
    }

    /// `#RRGGBB` in upper case.
    public var hex: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = [UInt8(ascii: "#")]
        for c in [red, green, blue] {
            out.append(digits[Int(c >> 4)])
            out.append(digits[Int(c & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Same as ``hex``.
    public var description: String { hex }
}
