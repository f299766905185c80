/// Why a render failed.
public enum RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The options cannot give an image of this ink (`invalid_layout`, `output_too_large`).
    case options(RenderOptionsError)
    /// libpng failed (with libpng's message).
    case png(PNGError)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .options(let e): e.description
        case .png(let e): "png_error: \(e.message)"
        }
    }
}
