/// Links to a proof's representations.
public struct ProofLinks: Encodable, Sendable {
    public var metadata: String
    public var png: String
    public var svg: String
    public var points: String

    public init(reference: String) {
        let base = Self.deliveryPath(reference) + "/proof"
        metadata = base
        png = base + "/signature.png"
        svg = base + "/signature.svg"
        points = base + "/points"
    }

    /// The path of the delivery `reference` (the proof's links hang below it).
    public static func deliveryPath(_ reference: String) -> String { "/v1/deliveries/\(reference)" }

    /// Distances are reported to the centimetre.
    public static func roundMeters(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
