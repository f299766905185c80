import Foundation

/// The one JSON decoder setting every response type shares.
enum ResponseDecoding {
    /// Members are named in each type's `CodingKeys` (snake_case on the wire).
    static var decoder: JSONDecoder { JSONDecoder() }
}
