import SignatureKit

/// A validated signature in canonical countersign.ink/v1 form, ready to go into a proof.
public struct CapturedInk: Sendable, Equatable {
    /// The canonical JSON (``InkSerializer``), written as the proof's `ink` member.
    public let json: [UInt8]
    /// The document those bytes parse to.
    public let document: InkDocument

    /// Wraps canonical bytes and their document (``InkRecorder/finish()`` or ``init(importing:format:limits:)``).
    init(json: [UInt8], document: InkDocument) {
        self.json = json
        self.document = document
    }

    /// Ink captured elsewhere, in any format SignatureKit reads (ink/v1, signature_pad, InkML,
    /// SVC2004; auto-detected when `format` is `nil`), validated with the server's limits and
    /// made canonical.
    public init(importing bytes: [UInt8], format: InkFormat? = nil, limits: InkLimits = .default) throws(InkError) {
        let parser = InkParser(limits: limits)
        let document = try parser.parse(bytes, format: format)
        let canonical = try CanonicalInk(document, parser: parser)
        self.init(json: canonical.bytes, document: canonical.document)
    }
}
