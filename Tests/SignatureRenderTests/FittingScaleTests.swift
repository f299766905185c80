import Foundation
import SignatureKit
import SignatureRender
import Testing

/// A portrait or tall canvas whose default ×2 render would be over the pixel cap or a side's
/// maximum: uploads render it at the largest scale that fits and store that scale (issue 21).
@Suite("Scale down to fit the pixel limits")
struct FittingScaleTests {
    /// A synthetic signature that climbs the whole height of `canvas` in three strokes.
    static func tallInk(_ canvas: CanvasSize) -> InkDocument {
        InkDocument(canvas: canvas, strokes: (0..<3).map { s in
            Stroke(points: (0..<60).map { i in
                let y = canvas.height * (0.05 + 0.9 * Double(i) / 59)
                let x = canvas.width * (0.2 + 0.3 * Double(s) + 0.1 * sin(Double(i) / 4 + Double(s)))
                return InkPoint(x: x, y: y, t: Double(s * 1000 + i * 12), pressure: 0.5)
            })
        })
    }

    static let cap = RenderOptions().maxPixels

    static func fitted(_ width: Double, _ height: Double) throws -> Layout {
        try Layout(canvas: CanvasSize(width: width, height: height), inkBounds: nil,
                   options: LayoutOptions(scaleDownToFit: true), maxPixels: cap)
    }

    @Test("the largest scale in thousandths that keeps the PNG within 2.5 Mpx and 4096 px a side")
    func chosenScale() throws {
        // The refused shapes: 600×1145 (1200×2290 at ×2) and a full-screen iPad pad, 1024×1366 pt.
        let portrait = try Self.fitted(600, 1145)
        #expect(portrait.transform.scale == 1.906)
        #expect(portrait.pixelWidth == 1144 && portrait.pixelHeight == 2183)
        // 1.907 would give 1145×2184 = 2,500,680 pixels: rounding up costs a thousandth.
        #expect(1145 * 2184 > Self.cap)
        let pad = try Self.fitted(1024, 1366)
        #expect(pad.transform.scale == 1.336)
        #expect(pad.pixelWidth == 1369 && pad.pixelHeight == 1825)
        // A very tall canvas meets the per-side maximum first.
        let tall = try Self.fitted(200, 10_000)
        #expect(tall.transform.scale == 0.409)
        #expect(tall.pixelWidth == 82 && tall.pixelHeight == 4090)
        // The largest canvas the ink limits allow.
        let largest = try Self.fitted(10_000, 10_000)
        #expect(largest.transform.scale == 0.158)
        for layout in [portrait, pad, tall, largest] {
            #expect(layout.pixelWidth * layout.pixelHeight <= Self.cap)
            #expect(layout.pixelWidth <= 4096 && layout.pixelHeight <= 4096)
        }
    }

    @Test("a canvas that fits at ×2 gets exactly the layout it gets without fitting")
    func fittingCanvasUnchanged() throws {
        for (w, h) in [(600.0, 200.0), (300.3, 100.0), (1000, 600)] {
            let canvas = CanvasSize(width: w, height: h)
            let plain = try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions())
            #expect(try Layout(canvas: canvas, inkBounds: nil, options: LayoutOptions(scaleDownToFit: true), maxPixels: Self.cap) == plain)
        }
        // Without fitting, the refusal stays.
        #expect(optionsError { try Layout(canvas: CanvasSize(width: 200, height: 10_000), inkBounds: nil, options: LayoutOptions()) }?
            .code == .outputTooLarge)
        // A margin that no scale can fit is still refused.
        let ink = Rect(minX: 10, minY: 10, maxX: 20, maxY: 20)
        #expect(optionsError {
            try Layout(canvas: CanvasSize(width: 600, height: 200), inkBounds: ink,
                       options: LayoutOptions(trim: true, margin: 3000, scaleDownToFit: true), maxPixels: Self.cap)
        }?.code == .outputTooLarge)
    }

    @Test("trimmed ink with a margin fits too, margin included")
    func trimmedFits() throws {
        let ink = Rect(minX: 0, minY: 0, maxX: 500, maxY: 3000)
        let layout = try Layout(canvas: CanvasSize(width: 600, height: 3000), inkBounds: ink,
                                options: LayoutOptions(trim: true, margin: 16, scaleDownToFit: true), maxPixels: Self.cap)
        #expect(layout.transform.scale < 2)
        #expect(layout.pixelHeight <= 4096 && layout.pixelWidth * layout.pixelHeight <= Self.cap)
        let above = layout.transform.scale + 0.001
        #expect((500 * above + 32).rounded(.up) * (3000 * above + 32).rounded(.up) > Double(Self.cap)
            || (3000 * above + 32).rounded(.up) > 4096)
    }

    @Test("an upload render of a portrait canvas: within the cap, the scale in the options to store, re-renders identical")
    func fittedRenderReproduces() throws {
        for canvas in [CanvasSize(width: 600, height: 1145), CanvasSize(width: 1024, height: 1366)] {
            let ink = Self.tallInk(canvas)
            #expect(throws: RenderError.self) { try SignatureRenderer.renderPNG(ink) }
            var timings = RenderTimings()
            let (image, used) = try SignatureRenderer.renderFittedPNG(ink, timings: &timings)
            #expect(image.width * image.height <= Self.cap)
            #expect(used.layout.scale < 2 && !used.layout.scaleDownToFit)
            var expected = RenderOptions()
            expected.layout.scale = used.layout.scale
            #expect(used == expected)
            let json = StoredRenderOptions.json(used)
            #expect(json.contains(#""scale":\#(used.layout.scale),"#))

            // Deterministic, and the stored options alone reproduce the PNG and the SVG's size.
            var again = RenderTimings()
            #expect(try SignatureRenderer.renderFittedPNG(ink, timings: &again).image == image)
            let stored = StoredRenderOptions.options(json, base: RenderOptions())
            #expect(stored == used)
            #expect(try SignatureRenderer.renderPNG(ink, options: stored) == image)
            let svg = try SignatureRenderer.renderSVG(ink, options: stored)
            #expect(svg.contains(#"width="\#(image.width)" height="\#(image.height)""#))
            #expect(try SignatureRenderer.renderSVG(ink, options: stored) == svg)
        }
    }

    @Test("an upload render that fits at ×2 is the plain render with the default options")
    func fittingUploadUnchanged() throws {
        let ink = Self.tallInk(CanvasSize(width: 600, height: 200))
        var timings = RenderTimings()
        let (image, used) = try SignatureRenderer.renderFittedPNG(ink, timings: &timings)
        #expect(used == RenderOptions())
        #expect(StoredRenderOptions.json(used) == StoredRenderOptions.json(RenderOptions()))
        #expect(image == (try SignatureRenderer.renderPNG(ink)))
    }
}
