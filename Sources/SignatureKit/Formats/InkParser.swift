/// Parses and validates ink in any supported format.
///
/// ```swift
/// let doc = try InkParser().parse(bytes)                       // auto-detect
/// let doc = try InkParser().parse(body[range], format: .ink)   // a member of a larger body
/// ```
/// Every successful result has passed ``InkValidator/validate(_:limits:)`` with ``limits``.
/// Byte offsets in errors are relative to the start of the bytes handed in.
public struct InkParser: Sendable {
    /// Limits and tolerances for parsing and validation.
    public var limits: InkLimits
    /// Canvas mapping for InkML and SVC2004.
    public var normalization: NormalizationOptions
    /// Canvas for auto-detected signature_pad data. When `nil`, the canvas is inferred as the
    /// smallest one anchored at the origin that holds the ink with equal margins.
    public var signaturePadCanvas: CanvasSize?

    /// Creates a parser.
    public init(limits: InkLimits = .default, normalization: NormalizationOptions = NormalizationOptions(),
                signaturePadCanvas: CanvasSize? = nil) {
        self.limits = limits
        self.normalization = normalization
        self.signaturePadCanvas = signaturePadCanvas
    }

    /// Parses `bytes` in `format`, or auto-detects it when `format` is `nil`.
    public func parse(_ bytes: UnsafeRawBufferPointer, format: InkFormat? = nil) throws(InkError) -> InkDocument {
        if bytes.count > limits.maxInputBytes {
            throw InkError(.inputTooLarge, "input of \(bytes.count) bytes exceeds \(limits.maxInputBytes) bytes")
        }
        guard let kind = format?.kind ?? InkFormatKind.detect(bytes) else {
            if InkParser.isBlank(bytes) { throw InkError(.emptyInput, "the input is empty") }
            throw InkError(.unsupportedFormat,
                           "unrecognised input: expected ink JSON ({...}), signature_pad JSON ([...]), InkML (<ink>) or SVC2004 text")
        }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !InkParser.isBlank(bytes) else {
            throw InkError(.emptyInput, "the input is empty")
        }
        let count = bytes.count
        let doc: InkDocument
        switch kind {
        case .ink:
            doc = try InkJSONParser.parse(base, count: count, limits: limits)
        case .signaturePad:
            var canvas = signaturePadCanvas
            if case .signaturePad(let c)? = format { canvas = c }
            doc = try SignaturePadParser.parse(base, count: count, canvas: canvas, limits: limits)
        case .inkml:
            doc = try InkMLParser.parse(base, count: count, limits: limits, normalization: normalization)
        case .svc2004:
            doc = try SVC2004Parser.parse(base, count: count, limits: limits, normalization: normalization)
        }
        try InkValidator.validate(doc, limits: limits)
        return doc
    }

    /// Parses a byte slice, e.g. the range of the `"ink"` member inside a request body.
    public func parse(_ bytes: ArraySlice<UInt8>, format: InkFormat? = nil) throws(InkError) -> InkDocument {
        let r: Result<InkDocument, InkError> = bytes.withUnsafeBytes { raw in
            do throws(InkError) { return .success(try parse(raw, format: format)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// Parses a byte array.
    public func parse(_ bytes: [UInt8], format: InkFormat? = nil) throws(InkError) -> InkDocument {
        try parse(bytes[...], format: format)
    }

    /// Parses UTF-8 text.
    public func parse(_ text: String, format: InkFormat? = nil) throws(InkError) -> InkDocument {
        try parse(Array(text.utf8), format: format)
    }

    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where !(b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D) { return false }
        return true
    }
}
