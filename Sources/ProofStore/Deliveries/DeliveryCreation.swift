/// Outcome of creating a delivery.
public enum DeliveryCreation: Sendable, Equatable {
    /// A new delivery was stored.
    case created(Delivery)
    /// The same reference with the same content already existed (an idempotent repeat).
    case existing(Delivery)
    /// The reference exists with different content.
    case conflict(Delivery)
}
