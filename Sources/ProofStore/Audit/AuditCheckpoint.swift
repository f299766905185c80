import Cryptography
import Foundation

/// A signed statement of the audit chains' heads: the anchor that lets an auditor detect a
/// truncated or rewritten chain later. The signed messages are documented in `docs/audit.md`
/// ("Signed checkpoints").
///
/// Version 2 (``messageTag``) signs the head of every chain at one moment. Version 1
/// (``legacyMessageTag``) signed the head `(seq, headHash)` of the single chain that existed before
/// migration 0009; such checkpoints are never made any more but still verify.
public struct AuditCheckpoint: Sendable, Equatable {
    /// The signature algorithm (the only one: `Ed25519`).
    public static let algorithm = "Ed25519"
    /// The tag that starts every version 2 message.
    public static let messageTag = "countersign.checkpoint/v2"
    /// The tag that starts every version 1 message.
    public static let legacyMessageTag = "countersign.checkpoint/v1"

    /// The message version: 1 (one chain) or 2 (every chain).
    public var version: Int
    /// Version 1: the head event's seq (0 for an empty chain). Version 2: the highest head seq of
    /// ``heads`` (informational: not signed by itself, derived from the signed list).
    public var seq: Int64
    /// Version 1: the head event's hash. Version 2: empty.
    public var headHash: [UInt8]
    /// Version 2: every chain's head, by ascending chain. Version 1: empty.
    public var heads: [AuditChainHead]
    /// When it was signed, in microseconds since the Unix epoch.
    public var signedAtMicros: Int64
    /// The signer's Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    /// The Ed25519 signature (64 bytes) of ``message``.
    public var signature: [UInt8]

    /// A version 1 checkpoint from its parts.
    public init(seq: Int64, headHash: [UInt8], signedAtMicros: Int64, publicKey: [UInt8], signature: [UInt8]) {
        self.version = 1
        self.seq = seq
        self.headHash = headHash
        self.heads = []
        self.signedAtMicros = signedAtMicros
        self.publicKey = publicKey
        self.signature = signature
    }

    /// A version 2 checkpoint from its parts.
    public init(heads: [AuditChainHead], signedAtMicros: Int64, publicKey: [UInt8], signature: [UInt8]) {
        self.version = 2
        self.seq = heads.map(\.seq).max() ?? 0
        self.headHash = []
        self.heads = heads
        self.signedAtMicros = signedAtMicros
        self.publicKey = publicKey
        self.signature = signature
    }

    /// Signs `heads` (every chain, ascending) now with `key`: a version 2 checkpoint.
    public static func sign(heads: [AuditChainHead], key: Ed25519PrivateKey, at date: Date = Date()) throws(CryptographyError) -> AuditCheckpoint {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let signature = try key.signature(for: message(heads: heads, signedAtMicros: micros))
        return AuditCheckpoint(heads: heads, signedAtMicros: micros, publicKey: key.publicKey.rawRepresentation, signature: signature)
    }

    /// Signs a version 1 checkpoint (only tests make these now: the single chain before 0009).
    public static func signLegacy(seq: Int64, headHash: [UInt8], key: Ed25519PrivateKey,
                                  at date: Date = Date()) throws(CryptographyError) -> AuditCheckpoint {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let signature = try key.signature(for: message(seq: seq, headHash: headHash, signedAtMicros: micros))
        return AuditCheckpoint(seq: seq, headHash: headHash, signedAtMicros: micros, publicKey: key.publicKey.rawRepresentation,
                               signature: signature)
    }

    /// The version 1 message: the tag as audit text (`0x01`, 4-byte big-endian length, UTF-8),
    /// `seq` and `signed_at` (microseconds) as 8-byte big-endian signed integers around the 32-byte head hash.
    public static func message(seq: Int64, headHash: [UInt8], signedAtMicros: Int64) -> [UInt8] {
        var out = CanonicalEncoder()
        out.text(legacyMessageTag)
        out.int64(seq)
        out.raw(headHash)
        out.int64(signedAtMicros)
        return out.bytes
    }

    /// The version 2 message: the tag as audit text, `signed_at` (microseconds) as an 8-byte and the
    /// number of heads as a 4-byte big-endian integer, then the heads as ``AuditChainHead/encode(_:)``
    /// writes them (2-byte chain, 8-byte seq, 32-byte hash each).
    public static func message(heads: [AuditChainHead], signedAtMicros: Int64) -> [UInt8] {
        var out = CanonicalEncoder()
        out.text(messageTag)
        out.int64(signedAtMicros)
        out.uint32(UInt32(heads.count))
        out.raw(AuditChainHead.encode(heads))
        return out.bytes
    }

    /// The bytes this checkpoint's signature covers.
    public var message: [UInt8] {
        version == 1 ? Self.message(seq: seq, headHash: headHash, signedAtMicros: signedAtMicros)
            : Self.message(heads: heads, signedAtMicros: signedAtMicros)
    }

    /// The signer's key id (``Cryptography/Ed25519PublicKey/keyID``), derived from ``publicKey``: not
    /// part of the signed message, so checkpoints signed before it existed name it too.
    public var keyID: String { Ed25519PublicKey.keyID(rawRepresentation: publicKey) }

    /// True when ``signature`` is ``publicKey``'s signature of ``message``.
    public var hasValidSignature: Bool {
        guard let key = try? Ed25519PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// The heads this checkpoint vouches for: version 2's list, or version 1's single head (chain 0).
    public var anchoredHeads: [AuditChainHead] {
        version == 1 ? [AuditChainHead(chain: 0, seq: seq, hash: headHash)] : heads
    }

    /// `signed_at` as a date.
    public var signedAt: Date { Date(timeIntervalSince1970: Double(signedAtMicros) / 1_000_000) }
}
