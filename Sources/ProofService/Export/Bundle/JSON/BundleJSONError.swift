/// Why a bundle's JSON (a `metadata.json`, an audit segment line, an event's details) could not
/// be read: the byte offset and what was wrong there, or the member that is missing or mistyped.
/// Hostile bundles end here, never in a crash.
struct BundleJSONError: Error, Equatable, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    /// At byte `offset` of the text.
    static func at(_ offset: Int, _ message: String) -> BundleJSONError {
        BundleJSONError("\(message) at byte \(offset)")
    }

    var description: String { message }
}

/// `value`, which a reader of one fixed schema found for the member `name`, or "`name` is missing".
func required<Value>(_ value: Value?, _ name: String) throws(BundleJSONError) -> Value {
    guard let value else { throw BundleJSONError("\(name) is missing") }
    return value
}
