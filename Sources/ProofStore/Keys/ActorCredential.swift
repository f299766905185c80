/// The secret a caller authenticated with — today an API key's bearer token — held only for its
/// request, so that the database functions that change evidence on the caller's behalf (migration
/// 0023) find the acting key themselves, by the token's digest, instead of trusting a key id the
/// runtime role hands them.
///
/// Never logged, stored or encoded: it prints as a placeholder, and only ProofStore reads it.
public struct ActorCredential: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The bearer token, exactly as presented.
    let token: String

    /// The credential of a request that presented `token`.
    public init(token: String) {
        self.token = token
    }

    public var description: String { "<credential>" }
    public var debugDescription: String { "<credential>" }
}
