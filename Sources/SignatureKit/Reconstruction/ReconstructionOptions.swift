/// Parameters of the weighted-Bézier reconstruction. The defaults reproduce UberSignature.
public struct ReconstructionOptions: Sendable, Equatable {
    /// A point closer than this (canvas units) to the previous accepted point is skipped.
    /// Default 2.
    public var minDistance: Double = 2
    /// Weight (full width) of the first point of a stroke. Default 3.
    public var dotWeight: Double = 3
    /// When `true`, every weight is multiplied by
    /// `minPressureScale + (1 - minPressureScale) · pressure` (a point without pressure counts
    /// as pressure 1). Default `false`: pressure is kept in the ink but does not change the shape.
    public var pressureScalesWidth: Bool = false
    /// Width factor at zero pressure when ``pressureScalesWidth`` is on. Default 0.3.
    public var minPressureScale: Double = 0.3

    /// The defaults (UberSignature's behaviour).
    public init() {}

    /// Options with pressure scaling switched on or off.
    public init(pressureScalesWidth: Bool, minPressureScale: Double = 0.3) {
        self.pressureScalesWidth = pressureScalesWidth
        self.minPressureScale = minPressureScale
    }
}
