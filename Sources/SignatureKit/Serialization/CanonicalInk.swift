/// A signature in its canonical `countersign.ink/v1` form: the bytes that are stored, and the
/// document those bytes parse to — which is what gets rendered, so re-rendering the stored bytes
/// later gives the same image (canonical numbers are rounded; the document is not the one sent).
public struct CanonicalInk: Sendable {
    /// The canonical JSON (``InkSerializer``).
    public let bytes: [UInt8]
    /// `bytes`, parsed and validated.
    public let document: InkDocument

    /// The canonical form of `document`, read back with `parser` (whose limits and validation apply).
    public init(_ document: InkDocument, parser: InkParser) throws(InkError) {
        let bytes = InkSerializer.serialize(document)
        self.bytes = bytes
        self.document = try parser.parse(bytes, format: .ink)
    }
}
