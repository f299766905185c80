import SignatureRender

/// Why a PNG was rendered.
public enum RenderPurpose: String, Sendable, CaseIterable {
    /// The PNG stored with a new proof.
    case upload
    /// A resized PNG rendered on request from the stored ink.
    case resize
}

/// What the use cases report as they work; the HTTP layer's metrics registry implements it.
public protocol ServiceMetrics: Sendable {
    /// Records how long the two halves of a PNG render took.
    func recordRender(_ timings: RenderTimings, purpose: RenderPurpose)
    /// Counts a stored proof and the size of its PNG.
    func recordProofStored(pngBytes count: Int)
}
