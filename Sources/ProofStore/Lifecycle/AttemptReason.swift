/// Why a delivery attempt failed (`delivery_attempts.reason`, the `attempt_reason` domain).
public enum AttemptReason: String, Sendable, CaseIterable, Codable {
    /// Nobody was there to receive it.
    case recipientAbsent = "recipient_absent"
    /// The recipient would not take it.
    case refused
    /// The courier could not find the address.
    case addressNotFound = "address_not_found"
    /// The courier could not get in (gate, building, security).
    case accessDenied = "access_denied"
    /// The parcel was found damaged and not handed over.
    case damaged
    /// Anything else (the note says what).
    case other
}
