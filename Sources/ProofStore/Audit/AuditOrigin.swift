/// Who caused an audit event and through what request.
public struct AuditOrigin: Sendable, Equatable {
    /// The acting API key, when there is one.
    public var actor: Actor?
    /// The role recorded when there is no actor: `cli` or `system`.
    public var fallbackRole: String?
    /// The HTTP request id.
    public var requestID: String?
    /// The caller's address.
    public var clientAddress: String?
    /// The caller's User-Agent.
    public var userAgent: String?
    /// What the caller authenticated with, for the database functions that find the acting key
    /// themselves (migration 0023). Never recorded in the event.
    public var credential: ActorCredential?

    /// Creates an origin.
    public init(actor: Actor?, fallbackRole: String? = nil, requestID: String? = nil, clientAddress: String? = nil,
                userAgent: String? = nil, credential: ActorCredential? = nil) {
        self.actor = actor
        self.fallbackRole = fallbackRole
        self.requestID = requestID
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.credential = credential
    }

    /// The command line (`countersign keys ...`).
    public static let cli = AuditOrigin(actor: nil, fallbackRole: "cli")
    /// The service itself, or a caller that gave no origin.
    public static let system = AuditOrigin(actor: nil, fallbackRole: "system")

    /// The role recorded in the event.
    public var role: String? { actor?.role.rawValue ?? fallbackRole }
}
