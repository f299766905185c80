/// The response an idempotent request finished with (replayed for a repeat with the same key).
public struct IdempotentResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var location: String?
    public var body: [UInt8]

    /// Creates a stored response.
    public init(status: Int, contentType: String, location: String?, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.location = location
        self.body = body
    }
}
