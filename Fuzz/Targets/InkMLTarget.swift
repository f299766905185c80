/// libFuzzer entry point: InkML (XML reader, DTD refusal, trace grammar, normalisation).
@_cdecl("LLVMFuzzerTestOneInput")
public func inkMLFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    let parser = InkParser()
    guard let doc = try? parser.parse(bytes, format: .inkml) else { return 0 }
    FuzzInput.checkParsed(doc, limits: parser.limits)
    return 0
}
