import Cryptography
import Foundation

/// A signed statement that the audit chain's event `seq` has hash `headHash`: the anchor that lets
/// an auditor detect a truncated or rewritten chain later. The signed message is documented in
/// `docs/audit.md` ("Signed checkpoints").
public struct AuditCheckpoint: Sendable, Equatable {
    /// The signature algorithm (the only one: `Ed25519`).
    public static let algorithm = "Ed25519"
    /// The version tag that starts every checkpoint message.
    public static let messageTag = "countersign.checkpoint/v1"

    /// The sequence number of the head event (0 for an empty chain).
    public var seq: Int64
    /// That event's hash (32 zero bytes for an empty chain).
    public var headHash: [UInt8]
    /// When it was signed, in microseconds since the Unix epoch.
    public var signedAtMicros: Int64
    /// The signer's Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    /// The Ed25519 signature (64 bytes) of ``message``.
    public var signature: [UInt8]

    /// Creates a checkpoint from its parts.
    public init(seq: Int64, headHash: [UInt8], signedAtMicros: Int64, publicKey: [UInt8], signature: [UInt8]) {
        self.seq = seq
        self.headHash = headHash
        self.signedAtMicros = signedAtMicros
        self.publicKey = publicKey
        self.signature = signature
    }

    /// Signs the head `(seq, headHash)` now with `key`.
    public static func sign(seq: Int64, headHash: [UInt8], key: Ed25519PrivateKey,
                            at date: Date = Date()) throws(CryptographyError) -> AuditCheckpoint {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let signature = try key.signature(for: message(seq: seq, headHash: headHash, signedAtMicros: micros))
        return AuditCheckpoint(seq: seq, headHash: headHash, signedAtMicros: micros, publicKey: key.publicKey.rawRepresentation,
                               signature: signature)
    }

    /// The signed bytes: the tag as audit text (`0x01`, 4-byte big-endian length, UTF-8), `seq` and
    /// `signed_at` (microseconds) as 8-byte big-endian signed integers around the 32-byte head hash.
    public static func message(seq: Int64, headHash: [UInt8], signedAtMicros: Int64) -> [UInt8] {
        var out: [UInt8] = [1]
        let tag = Array(messageTag.utf8)
        withUnsafeBytes(of: UInt32(tag.count).bigEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: tag)
        withUnsafeBytes(of: seq.bigEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: headHash)
        withUnsafeBytes(of: signedAtMicros.bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The bytes this checkpoint's signature covers.
    public var message: [UInt8] { Self.message(seq: seq, headHash: headHash, signedAtMicros: signedAtMicros) }

    /// True when ``signature`` is ``publicKey``'s signature of ``message``.
    public var hasValidSignature: Bool {
        guard let key = try? Ed25519PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// `signed_at` as a date.
    public var signedAt: Date { Date(timeIntervalSince1970: Double(signedAtMicros) / 1_000_000) }
}
