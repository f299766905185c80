/// What the database refused about an erasure or a legal hold.
public enum ErasureError: Error, Sendable, Equatable {
    /// No delivery has the reference.
    case deliveryNotFound
    /// The credential is no live key of a role that may do it (0026's definer functions), with the
    /// database's message.
    case actorRefused(String)
}
