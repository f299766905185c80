import ProofStore

extension ServiceError {
    /// 409 `invalid_transition`: the delivery's status does not allow the change (a proof or an
    /// attempt for a delivery that ended, a second cancel).
    public static func invalidTransition(_ reference: String, from status: DeliveryStatus, to wanted: String) -> ServiceError {
        ServiceError(.conflict, code: "invalid_transition",
                     detail: "Delivery \(reference) is \(status.rawValue); it cannot \(wanted).")
    }

    /// 409 `invalid_transition` for a delivery that is not pending any more, going to `wanted`.
    public static func invalidTransition(_ reference: String, from status: DeliveryStatus, to wanted: DeliveryStatus) -> ServiceError {
        invalidTransition(reference, from: status, to: "become \(wanted.rawValue)")
    }

    /// 409 `invalid_transition` when the database refused the change (a concurrent request changed
    /// the status after this one looked); its message names the status.
    static func invalidTransition(_ reference: String, databaseSaid message: String) -> ServiceError {
        ServiceError(.conflict, code: "invalid_transition", detail: "Delivery \(reference) cannot change so: \(message).")
    }
}
