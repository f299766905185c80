/// libFuzzer entry point: `countersign.ink/v1` JSON through ``InkParser`` (format `.ink`), and a
/// serialise/re-parse round trip of every accepted document.
@_cdecl("LLVMFuzzerTestOneInput")
public func inkJSONFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    let parser = InkParser()
    guard let doc = try? parser.parse(bytes, format: .ink) else { return 0 }
    FuzzInput.checkParsed(doc, limits: parser.limits)
    let again = InkSerializer.serialize(doc)
    do { _ = try parser.parse(again, format: .ink) } catch {
        fatalError("the serialised form of an accepted document is rejected: \(error)")
    }
    return 0
}
