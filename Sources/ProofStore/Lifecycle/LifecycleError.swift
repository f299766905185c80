/// Why the database refused a change of a delivery's life.
public enum LifecycleError: Error, Sendable, Equatable {
    /// No delivery has the reference.
    case deliveryNotFound
    /// The delivery's status does not allow it (delivered, failed or cancelled already); the
    /// database's message says which. Raised by migration 0014's triggers as SQLSTATE 23514 on the
    /// constraint `delivery_transition`.
    case invalidTransition(String)
    /// The database found no live dispatcher or admin key for the caller's credential (revoked
    /// since it was authenticated, or none given); the database's message.
    case actorRefused(String)
    /// The closing time is more than five minutes from the database's clock; the database's message.
    case clockSkew(String)

    /// The constraint name migration 0014 raises illegal transitions under.
    public static let transitionConstraint = "delivery_transition"
}
