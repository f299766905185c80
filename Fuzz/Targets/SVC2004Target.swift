/// libFuzzer entry point: SVC2004 signature text.
@_cdecl("LLVMFuzzerTestOneInput")
public func svc2004Fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    let parser = InkParser()
    guard let doc = try? parser.parse(bytes, format: .svc2004) else { return 0 }
    FuzzInput.checkParsed(doc, limits: parser.limits)
    return 0
}
