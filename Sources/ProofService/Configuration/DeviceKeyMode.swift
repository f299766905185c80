/// How a deployment treats device signatures on uploads (`DEVICE_KEYS`).
public enum DeviceKeyMode: String, Sendable, Equatable, CaseIterable {
    /// The signature headers are ignored: nothing is verified or stored (a deployment without devices that sign).
    case off
    /// A signature present is verified and stored, and a bad one refused; an unsigned upload is accepted (the default, for a fleet moving over).
    case optional
    /// Every upload needs a valid signature by an approved, unrevoked key of the uploading courier.
    case required
}
