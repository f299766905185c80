/// Facts about the device that captured a signature (all optional, as reported by the app).
public struct DeviceFacts: Sendable, Equatable, Codable {
    public var id: String?
    public var model: String?
    public var os: String?
    public var app: String?

    /// Creates device facts.
    public init(id: String? = nil, model: String? = nil, os: String? = nil, app: String? = nil) {
        self.id = id
        self.model = model
        self.os = os
        self.app = app
    }
}
