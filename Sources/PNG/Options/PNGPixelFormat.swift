/// The PNG pixel layout.
public enum PNGPixelFormat: Sendable, Equatable {
    /// Chosen by measurement (docs/decisions/0001-png-pixel-format.md): on a transparent background an 8-bit
    /// palette of the ink colour with a 256-step tRNS alpha ramp (the coverage byte *is* the
    /// palette index, 1 byte/pixel); on white, 8-bit grey for a grey ink, else an opaque
    /// palette of the 256 ink-over-white blends.
    case automatic
    /// 8-bit palette indexed by coverage.
    case palette
    /// 8-bit grey + 8-bit alpha (transparent background, grey inks only).
    case grayAlpha
    /// 8-bit grey (white background, grey inks only).
    case gray
}
