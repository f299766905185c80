import PNGTestSupport
import SignatureKit
import SignatureRender

/// libFuzzer entry point: the service's render path over parsed input. Any format is
/// auto-detected; the first byte picks layout options (size, trim, pressure, colour) so odd
/// layouts are reached too. Accepted ink is rendered to PNG exactly as an upload is (the banded
/// rasteriser streaming rows through the C shim into libpng, the cached rasteriser reused between
/// renders) and written as SVG, with the service's pixel cap (2.5 Mpx).
///
/// Oracle: libpng decodes the PNG, and its alpha channel must equal the coverage mask of the same
/// geometry from the whole-image path (`SignatureRenderer.rasterize`), byte for byte. That catches
/// a band resolved twice or skipped, rows handed to libpng out of order, state left behind in the
/// reused rasteriser, and a palette or tRNS ramp that does not map coverage to alpha.
@_cdecl("LLVMFuzzerTestOneInput")
public func renderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = FuzzInput.bytes(data, size)
    guard let selector = all.first else { return 0 }
    let bytes = Array(all.dropFirst())
    guard let doc = try? InkParser().parse(bytes) else { return 0 }
    var options = RenderOptions()
    switch selector & 3 {
    case 1: options.layout.width = 1 + Int(selector >> 2) * 16
    case 2: options.layout.height = 1 + Int(selector >> 2); options.layout.trim = true
    case 3: options.layout.width = 4096; options.layout.height = 1
    default: break
    }
    if selector & 0x80 != 0 { options.reconstruction = ReconstructionOptions(pressureScalesWidth: true) }
    if selector & 0x40 != 0 { options.color = RGBColor(red: 0x1F, green: 0x4E, blue: 0x9A) }
    guard let geometry = try? SignatureRenderer.geometry(doc, options: options) else { return 0 }
    let w = geometry.layout.pixelWidth, h = geometry.layout.pixelHeight
    guard w > 0, h > 0 else { fatalError("layout of \(w)×\(h) pixels") }

    let image: RenderedImage
    do {
        image = try SignatureRenderer.renderPNG(geometry, options: options)
    } catch .options(let error) where error.code == .outputTooLarge {
        return 0  // over the pixel cap: refused before any pixel work, as the service does
    } catch {
        fatalError("render of \(w)×\(h) pixels failed: \(error)")
    }
    let decoded: PNGDecoder.Image
    do { decoded = try PNGDecoder.decodeRGBA(image.png) } catch { fatalError("libpng cannot read our PNG: \(error)") }
    guard decoded.width == w, decoded.height == h else {
        fatalError("PNG is \(decoded.width)×\(decoded.height), layout \(w)×\(h)")
    }
    let coverage = SignatureRenderer.rasterize(geometry, options: options)
    if coverage.count != w * h { fatalError("coverage has \(coverage.count) bytes for \(w * h) pixels") }
    if decoded.alpha != coverage {
        let alpha = decoded.alpha
        let first = alpha.indices.first { alpha[$0] != coverage[$0] } ?? 0
        fatalError("PNG alpha differs from the coverage mask at pixel \(first % w),\(first / w) of \(w)×\(h)")
    }
    if SVGWriter.svg(geometry).isEmpty { fatalError("empty SVG") }
    return 0
}
