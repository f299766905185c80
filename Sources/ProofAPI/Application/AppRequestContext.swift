import HTTPTypes
import Hummingbird
import Logging
import ProofStore

/// The per-request context of the Countersign API.
public struct AppRequestContext: RequestContext {
    /// Hummingbird's core storage (logger, parameters, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// The request id: the caller's `X-Request-Id` when well formed, else one made here.
    public var requestID: String
    /// The authenticated caller, once the auth middleware has run.
    public var actor: Actor?
    /// The token it authenticated with (for the database functions that act as its key).
    public var credential: ActorCredential?
    /// Peer address, for the audit trail.
    public var clientAddress: String?

    /// Creates a context for one request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = ""
        self.actor = nil
        self.credential = nil
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Decoding limit for bodies decoded through Hummingbird's decoder; upload routes collect with their own limit.
    public var maxUploadSize: Int { 2 << 20 }
}

extension AppRequestContext {
    /// Who and what request an audit event records: the actor, request id, peer address and User-Agent.
    public func auditOrigin(_ request: Request) -> AuditOrigin {
        AuditOrigin(actor: actor, requestID: requestID.isEmpty ? nil : requestID, clientAddress: clientAddress,
                    userAgent: request.headers[.userAgent], credential: credential)
    }
}
