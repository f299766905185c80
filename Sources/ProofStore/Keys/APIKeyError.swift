/// Why a key could not be made.
public enum APIKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name is empty or too long.
    case invalidName(String)

    public var description: String {
        switch self {
        case .invalidName(let message): return message
        }
    }
}
