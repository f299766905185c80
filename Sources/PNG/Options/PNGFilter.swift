/// PNG scanline filter (one for every row, or libpng's adaptive choice).
public enum PNGFilter: Sendable, Equatable {
    case none, sub, up, average, paeth
    /// libpng's per-row heuristic over all five filters.
    case adaptive

    var mask: Int32 {
        switch self {
        case .none: 0x08
        case .sub: 0x10
        case .up: 0x20
        case .average: 0x40
        case .paeth: 0x80
        case .adaptive: 0xF8
        }
    }
}
