import SignatureKit
import SignatureRender
import Testing

/// The SVG path data of stored proofs must never change (their SVG is re-rendered on every
/// export): pinned bytes for each element, and the longest numbers the formatter writes.
@Suite("SVG path data")
struct SVGPathDataTests {
    static func text(_ elements: [PathElement], decimals: Int) -> String {
        var out: [UInt8] = []
        SVGWriter.appendPathData(elements, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test("each element's bytes, rounding half away from zero, trailing zeros dropped")
    func pinned() {
        let elements: [PathElement] = [
            .move(Point(x: 1, y: 2.5)), .line(Point(x: -0.004, y: 10.125)),
            .quad(control: Point(x: 3.333, y: 4), to: Point(x: 5.005, y: -6.5)),
            .cubic(control1: Point(x: 7, y: 8.1), control2: Point(x: 9.99, y: 10), to: Point(x: 11.5, y: 12)), .close,
        ]
        #expect(Self.text(elements, decimals: 2) == "M1,2.5L0,10.13Q3.33,4 5.01,-6.5C7,8.1 9.99,10 11.5,12Z")
        #expect(Self.text(elements, decimals: 0) == "M1,3L0,10Q3,4 5,-7C7,8 10,10 12,12Z")
        #expect(Self.text([], decimals: 2) == "")
    }

    @Test("a cubic of the longest numbers (21 bytes each) fits and is written whole")
    func longest() {
        let far = Point(x: -1e12, y: -999_999_999_999.123456)
        let text = Self.text([.cubic(control1: far, control2: far, to: far), .line(Point(x: 1e15, y: .nan))], decimals: 6)
        let number = "-1000000000000"
        let near = "-999999999999.123456"
        #expect(text == "C\(number),\(near) \(number),\(near) \(number),\(near)L1000000000000,0")
    }
}
