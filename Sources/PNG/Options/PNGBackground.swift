/// What lies under the ink.
public enum PNGBackground: Sendable, Equatable {
    /// Alpha channel: pixels without ink are fully transparent (the default).
    case transparent
    /// Ink composited over opaque white; no alpha channel.
    case white
}
