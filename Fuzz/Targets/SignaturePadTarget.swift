/// libFuzzer entry point: signature_pad `toData()` JSON, with an inferred canvas and with a fixed
/// 600×200 canvas.
@_cdecl("LLVMFuzzerTestOneInput")
public func signaturePadFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    let parser = InkParser()
    if let doc = try? parser.parse(bytes, format: .signaturePad(canvas: CanvasSize(width: 600, height: 200))) {
        FuzzInput.checkParsed(doc, limits: parser.limits)
    }
    if let doc = try? parser.parse(bytes) {
        FuzzInput.checkParsed(doc, limits: parser.limits)
    }
    return 0
}
