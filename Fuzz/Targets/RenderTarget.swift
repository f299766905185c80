/// libFuzzer entry point: the renderer over parsed input. Any format is auto-detected; the first
/// byte picks layout options (size, trim, pressure) so odd layouts are reached too. Accepted ink
/// is reconstructed, laid out, rasterised to coverage (the PNG step is libpng's, not fuzzed here)
/// and written as SVG, with the service's pixel cap (2.5 Mpx).
@_cdecl("LLVMFuzzerTestOneInput")
public func renderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = FuzzInput.bytes(data, size)
    guard let selector = all.first else { return 0 }
    let bytes = Array(all.dropFirst())
    guard let doc = try? InkParser().parse(bytes) else { return 0 }
    var layout = LayoutOptions()
    switch selector & 3 {
    case 1: layout.width = 1 + Int(selector >> 2) * 16
    case 2: layout.height = 1 + Int(selector >> 2); layout.trim = true
    case 3: layout.width = 4096; layout.height = 1
    default: break
    }
    let reconstruction = selector & 0x80 != 0
        ? ReconstructionOptions(pressureScalesWidth: true) : ReconstructionOptions()
    guard let geometry = try? RenderGeometry(document: doc, layout: layout, reconstruction: reconstruction) else {
        return 0
    }
    let w = geometry.layout.pixelWidth, h = geometry.layout.pixelHeight
    guard w > 0, h > 0 else { fatalError("layout of \(w)×\(h) pixels") }
    let (pixels, overflow) = w.multipliedReportingOverflow(by: h)
    guard !overflow, pixels <= 2_500_000, w <= Rasterizer.maxDimension, h <= Rasterizer.maxDimension else { return 0 }
    var raster = Rasterizer(width: w, height: h)
    // The same conversion as SignatureRenderer.path(_:): that module links libpng, which this
    // target is built without (SignatureKit and Raster sources only).
    var path = Path()
    for e in geometry.outline.elements {
        switch e {
        case .move(let a): path.move(a.x, a.y)
        case .line(let a): path.line(a.x, a.y)
        case .quad(let c, let a): path.quad(c.x, c.y, a.x, a.y)
        case .cubic(let c1, let c2, let a): path.cubic(c1.x, c1.y, c2.x, c2.y, a.x, a.y)
        case .close: path.close()
        }
    }
    raster.fill(path)
    let coverage = raster.takeCoverage()
    if coverage.count != pixels { fatalError("coverage has \(coverage.count) bytes for \(pixels) pixels") }
    let svg = SVGWriter.svg(geometry)
    if svg.isEmpty { fatalError("empty SVG") }
    return 0
}
