/// The signature as the server understood and drew it: canonical ink and the PNG rendered from it,
/// with what is needed to render it again.
public struct ProofRendering: Sendable {
    /// Which member carried the signature: `ink`, `signature_pad` or `inkml`.
    public var inkFormat: String
    /// Canonical `countersign.ink/v1` bytes of the parsed ink.
    public var ink: [UInt8]
    public var pointCount: Int
    public var strokeCount: Int
    public var png: [UInt8]
    public var pngSHA256: [UInt8]
    public var pngWidth: Int
    public var pngHeight: Int
    /// The render parameters, as JSON, so the PNG can be reproduced.
    public var renderOptionsJSON: String
    /// The reconstruction algorithm that drew the PNG.
    public var algorithmVersion: String

    /// Creates a rendering.
    public init(inkFormat: String, ink: [UInt8], pointCount: Int, strokeCount: Int, png: [UInt8], pngSHA256: [UInt8],
                pngWidth: Int, pngHeight: Int, renderOptionsJSON: String, algorithmVersion: String) {
        self.inkFormat = inkFormat
        self.ink = ink
        self.pointCount = pointCount
        self.strokeCount = strokeCount
        self.png = png
        self.pngSHA256 = pngSHA256
        self.pngWidth = pngWidth
        self.pngHeight = pngHeight
        self.renderOptionsJSON = renderOptionsJSON
        self.algorithmVersion = algorithmVersion
    }
}
