/// Canonical ink and its render parameters.
public struct StoredInk: Sendable, Equatable {
    /// `countersign.ink/v1` bytes.
    public var ink: [UInt8]
    /// The render options used for the stored PNG (JSON).
    public var renderOptionsJSON: String
    /// Points in the ink, as stored with the proof (how much work a re-render is).
    public var pointCount: Int
}
