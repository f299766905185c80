/// One field-level error: a JSON pointer or parameter name, what is wrong with it, and a code.
public struct FieldError: Codable, Sendable, Equatable {
    public var field: String
    public var message: String
    public var code: String?

    /// Creates a field error.
    public init(field: String, message: String, code: String? = nil) {
        self.field = field
        self.message = message
        self.code = code
    }
}
