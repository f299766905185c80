import SignatureKit
import SignatureRender
import Testing

@Suite("Stored render options")
struct StoredRenderOptionsTests {
    @Test("what is stored with a proof reads back as the same options")
    func roundTrip() {
        var options = RenderOptions()
        options.layout.scale = 3
        options.layout.trim = true
        options.layout.margin = 8
        options.color = RGBColor(red: 200, green: 30, blue: 30)
        options.background = .white
        options.tolerance = 0.2
        options.png.compressor = .zlib
        let json = StoredRenderOptions.json(options)
        #expect(json.contains(#""png_compressor":"zlib""#))
        #expect(StoredRenderOptions.options(json, base: RenderOptions()) == options)
        #expect(StoredRenderOptions.json(RenderOptions()).contains(#""png_compressor":"run-length""#))
        #expect(StoredRenderOptions.options(StoredRenderOptions.json(RenderOptions()), base: options) == RenderOptions())
    }

    @Test("a proof stored before the compressor was recorded is re-encoded with zlib, as it was written")
    func olderProofsUseZlib() {
        var zlib = RenderOptions()
        zlib.png.compressor = .zlib
        #expect(RenderOptions().png.compressor == .runLength)
        #expect(StoredRenderOptions.options(##"{"scale":2,"color":"#000000"}"##, base: RenderOptions()) == zlib)
        // An unknown name keeps the base value, like any other malformed member.
        #expect(StoredRenderOptions.options(#"{"png_compressor":"lzw"}"#, base: RenderOptions()).png.compressor == .runLength)
    }

    @Test("missing, malformed or out-of-range members keep the base value")
    func lenient() {
        let base = RenderOptions()
        #expect(StoredRenderOptions.options("not json", base: base) == base)
        #expect(StoredRenderOptions.options(#"{"png_compressor":"run-length"}"#, base: base) == base)
        let odd = StoredRenderOptions.options(#"{"scale":-1,"width":0,"trim":"yes","color":"red","background":"plaid","tolerance":true,"png_compressor":"run-length"}"#, base: base)
        #expect(odd == base)
    }

    @Test("options read again (from the decoded cache) still apply to each base, past the cache's size")
    func cachedMembersApplyToEachBase() {
        var white = RenderOptions()
        white.background = .white
        let json = #"{"scale":2,"png_compressor":"run-length"}"#
        for _ in 0..<2 {
            #expect(StoredRenderOptions.options(json, base: RenderOptions()).background == RenderOptions().background)
            #expect(StoredRenderOptions.options(json, base: white).background == .white)
            #expect(StoredRenderOptions.options(json, base: white).layout.scale == 2)
        }
        for margin in 0..<200 {
            let text = #"{"margin":\#(margin),"png_compressor":"run-length"}"#
            #expect(StoredRenderOptions.options(text, base: white).layout.margin == Double(margin))
            #expect(StoredRenderOptions.options(text, base: white).layout.margin == Double(margin))
        }
        #expect(StoredRenderOptions.options("not json", base: white) == white)
        #expect(StoredRenderOptions.options("not json", base: RenderOptions()) == RenderOptions())
    }
}
