import Foundation

/// A device key as the server shows it (`POST /v1/devices`, `GET /v1/devices/{id}`).
public struct RegisteredDevice: Sendable, Equatable, Decodable {
    /// What uploads name in `Countersign-Device-Key`.
    public var id: String
    public var publicKey: String
    public var fingerprint: String
    public var label: String
    /// `registered` (waiting for approval), `approved` or `revoked`.
    public var status: String

    enum CodingKeys: String, CodingKey {
        case id, fingerprint, label, status
        case publicKey = "public_key"
    }
}
