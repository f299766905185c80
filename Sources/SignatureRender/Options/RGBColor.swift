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
        var digits = hex.utf8[...]
        if digits.first == UInt8(ascii: "#") { digits = digits.dropFirst() }
        // Six ASCII hex digits exactly: `UInt32(_:radix:)` alone would also take a sign.
        guard digits.count == 6, digits.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
              let v = UInt32(String(decoding: digits, as: UTF8.self), radix: 16) else { return nil }
        self.init(red: UInt8(v >> 16), green: UInt8((v >> 8) & 0xFF), blue: UInt8(v & 0xFF))
    }

    /// Parses `#RRGGBB`, throwing `invalid_color` with a clear message otherwise.
    public static func parse(_ text: String) throws(RenderOptionsError) -> RGBColor {
        guard let c = RGBColor(hex: text) else {
            throw RenderOptionsError(.invalidColor, "colour \"\(text.prefix(32))\" is not #RRGGBB")
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
