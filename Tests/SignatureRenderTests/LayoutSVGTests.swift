import Foundation
import InkTestSupport
import Testing
import SignatureKit
import SignatureRender

@Suite("Layout, SVG and colours")
struct LayoutSVGTests {
    let canvas = CanvasSize(width: 600, height: 200)

    @Test("default: canvas × 2, identity placement")
    func defaultLayout() throws {
        let l = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions())
        #expect(l.pixelWidth == 1200 && l.pixelHeight == 400)
        #expect(l.transform == Transform(scale: 2, tx: 0, ty: 0))
        let s3 = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(scale: 0.5))
        #expect(s3.pixelWidth == 300 && s3.pixelHeight == 100)
        let odd = try Layout(canvas: CanvasSize(width: 300.3, height: 100), inkBounds: nil, options: LayoutOptions())
        #expect(odd.pixelWidth == 601)   // never cut ink: round up
    }

    @Test("width/height: fit keeping aspect, centred")
    func fit() throws {
        let both = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(width: 300, height: 300))
        #expect(both.pixelWidth == 300 && both.pixelHeight == 300)
        #expect(both.transform.scale == 0.5)
        // 600×200 × 0.5 = 300×100, centred vertically in 300: 100 px above.
        #expect(both.transform.apply(Point(x: 0, y: 0)) == Point(x: 0, y: 100))
        #expect(both.transform.apply(Point(x: 600, y: 200)) == Point(x: 300, y: 200))
        let w = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(width: 900))
        #expect(w.pixelWidth == 900 && w.pixelHeight == 300)
        let h = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(height: 100))
        #expect(h.pixelWidth == 300 && h.pixelHeight == 100)
    }

    @Test("trim: ink bounds plus margin pixels")
    func trim() throws {
        let ink = Rect(minX: 100, minY: 50, maxX: 300, maxY: 150)
        let l = try Layout(canvas: canvas, inkBounds: ink, options: LayoutOptions(trim: true, margin: 10))
        #expect(l.pixelWidth == 420 && l.pixelHeight == 220)
        #expect(l.transform.apply(Point(x: 100, y: 50)) == Point(x: 10, y: 10))
        #expect(l.transform.apply(Point(x: 300, y: 150)) == Point(x: 410, y: 210))
        let fitted = try Layout(canvas: canvas, inkBounds: ink, options: LayoutOptions(width: 220, trim: true, margin: 10))
        #expect(fitted.pixelWidth == 220 && fitted.pixelHeight == 120)
        #expect(fitted.transform.apply(Point(x: 100, y: 50)) == Point(x: 10, y: 10))
        // Without ink, trim falls back to the canvas.
        let empty = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(trim: true))
        #expect(empty.pixelWidth == 1200)
    }

    @Test("limits and invalid options give clear errors")
    func errors() {
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(scale: 10)) }?.code == .outputTooLarge)
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(width: 5000)) }?.code == .outputTooLarge)
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(scale: 0)) }?.code == .invalidLayout)
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(scale: .nan)) }?.code == .invalidLayout)
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(width: -1)) }?.code == .invalidLayout)
        let tiny = Rect(minX: 10, minY: 10, maxX: 10.001, maxY: 10.001)
        #expect(optionsError { try Layout(canvas: canvas, inkBounds: tiny, options: LayoutOptions(scale: 1e9, trim: true)) }?.code == .outputTooLarge)
    }

    @Test("SVG: viewBox in output pixels, colour, fill rule, background; byte-identical twice")
    func svg() throws {
        let doc = syntheticDocument()
        let a = try SVGWriter.render(doc)
        let b = try SVGWriter.render(doc)
        #expect(a == b)
        let text = String(decoding: a, as: UTF8.self)
        #expect(text.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="400" viewBox="0 0 1200 400">"#))
        #expect(text.contains(##"<path fill="#000000" fill-rule="nonzero" d="M"##))
        #expect(!text.contains("<rect"))
        #expect(text.hasSuffix("</svg>\n"))
        // Path coordinates: plain decimals, at most 2 places, no exponent.
        let d = text.split(separator: "d=\"")[1].split(separator: "\"")[0]
        #expect(!d.contains("e") && !d.contains("E"))
        for number in d.split(whereSeparator: { "MLQCZ ,".contains($0) }) {
            if let dot = number.firstIndex(of: ".") { #expect(number.distance(from: dot, to: number.endIndex) <= 3) }
        }
        // The number of subpaths matches the outline.
        #expect(d.filter { $0 == "M" }.count == doc.outline().subpathCount)
        let styled = String(decoding: try SVGWriter.render(doc, options: SVGWriter.Options(color: RGBColor(hex: "#1a2B3c")!, background: .white)), as: UTF8.self)
        #expect(styled.contains(##"<rect width="100%" height="100%" fill="#FFFFFF"/>"##))
        #expect(styled.contains(##"fill="#1A2B3C""##))
        // The SVG path equals the outline transformed by the layout.
        let g = try RenderGeometry(document: doc, layout: LayoutOptions(width: 500, trim: true))
        let moved = doc.outline().transformed(by: g.layout.transform)
        #expect(moved.elements == g.outline.elements)
        #expect(g.outline.bounds.minX >= 0 && g.outline.bounds.maxX <= 500)
    }

    @Test("colour parsing")
    func colours() {
        #expect(RGBColor(hex: "#FF8000") == RGBColor(red: 255, green: 128, blue: 0))
        #expect(RGBColor(hex: "00ff7f")?.hex == "#00FF7F")
        for bad in ["", "#", "#FFF", "#GG0000", "#FF00000", "red", "#ff 000"] {
            #expect(RGBColor(hex: bad) == nil, "\(bad)")
            #expect(optionsError { try RGBColor.parse(bad) }?.code == .invalidColor)
        }
        #expect(RGBColor.black.description == "#000000")
    }
}

/// Runs `body` and returns the `RenderOptionsError` it threw, or `nil` when it did not throw.
func optionsError<T>(_ body: () throws -> T) -> RenderOptionsError? {
    thrownError(RenderOptionsError.self, body)
}
