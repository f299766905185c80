import Cryptography

/// The secret that turns a delivery's fact digests into *commitments* (docs/audit.md, "Salted
/// commitments"): an audit event binds `HMAC-SHA256(salt, digest)` instead of the plain digest of
/// facts a guesser could enumerate (a name, an address), so the chain alone confirms no guess.
///
/// The salt is derived from the delivery's data key (`HMAC-SHA256(data key,
/// "countersign.commitment-salt/v1")`), so it exists exactly as long as that key: erasure destroys
/// the key, and with it every way to test a guess against the delivery's events. While the data
/// exists, `verify --database` derives it again, and a bundle carries it beside the facts it
/// already holds in clear. It reveals nothing about the data key (HMAC is one-way).
public struct CommitmentSalt: Sendable, Equatable, CustomStringConvertible {
    /// The label the salt is derived under.
    public static let label = "countersign.commitment-salt/v1"

    public let bytes: [UInt8]

    /// The salt of the delivery whose data key is `key`.
    init(_ key: DataKey) throws(SealingError) {
        do {
            bytes = try HMACSHA256.authenticationCode(for: Array(Self.label.utf8), key: key.bytes)
        } catch {
            throw .sealingFailed(error.description)
        }
    }

    /// A salt as a bundle states it (64 hex digits); nil for anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 2 * HMACSHA256.byteCount, let bytes = Hex.decode(hex) else { return nil }
        self.bytes = bytes
    }

    /// The commitment to the facts whose plain digest is `digest`.
    public func commit(_ digest: [UInt8]) throws(SealingError) -> [UInt8] {
        do { return try HMACSHA256.authenticationCode(for: digest, key: bytes) } catch {
            throw .sealingFailed(error.description)
        }
    }

    /// Never the salt itself in logs.
    public var description: String { "CommitmentSalt(redacted)" }
}
