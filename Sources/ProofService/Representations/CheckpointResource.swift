import Cryptography
import Foundation
import ProofStore

/// A signed audit checkpoint as `GET /v1/audit/checkpoint` returns it and export manifests embed it
/// (hex for bytes; `signed_at_us` is the exact time the signature covers).
///
/// Version 2: `{"version":2,"seq":<highest head_seq>,"chains":[{"chain","head_seq","head_hash"},…],
/// "signed_at","signed_at_us","algorithm","public_key","key_id","signature"}`. Version 1 (before the chains;
/// `version` absent in bundles made then): `seq` and `head_hash` instead of `chains`.
///
/// `key_id` (``Cryptography/Ed25519PublicKey/keyID`` of `public_key`) is not in the bytes the
/// checkpoint's signature covers, so adding it changed no signature: checkpoints and bundles made
/// before it have none (it is derived from `public_key` when read) and verify as they did; when
/// present it must match `public_key` (``keyIDMatches``).
public struct CheckpointResource: Codable, Equatable {
    public var version: Int
    public var seq: Int64
    public var headHash: String?
    public var chains: [ChainHeadResource]?
    public var signedAt: String
    public var signedAtUs: Int64
    public var algorithm: String
    public var publicKey: String
    /// `ed25519:` + 16 hex digits; nil when read from a checkpoint made before key ids.
    public var keyID: String?
    public var signature: String

    enum CodingKeys: String, CodingKey {
        case version, seq, chains, algorithm, signature
        case headHash = "head_hash", signedAt = "signed_at", signedAtUs = "signed_at_us", publicKey = "public_key"
        case keyID = "key_id"
    }

    public init(_ checkpoint: AuditCheckpoint) {
        version = checkpoint.version
        seq = checkpoint.seq
        headHash = checkpoint.version == 1 ? checkpoint.headHash.hexString : nil
        chains = checkpoint.version == 1 ? nil : checkpoint.heads.map(ChainHeadResource.init)
        signedAt = RFC3339Timestamp.format(checkpoint.signedAt)
        signedAtUs = checkpoint.signedAtMicros
        algorithm = AuditCheckpoint.algorithm
        publicKey = checkpoint.publicKey.hexString
        keyID = checkpoint.keyID
        signature = checkpoint.signature.hexString
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decodeIfPresent(Int.self, forKey: .version) ?? 1
        seq = try c.decode(Int64.self, forKey: .seq)
        headHash = try c.decodeIfPresent(String.self, forKey: .headHash)
        chains = try c.decodeIfPresent([ChainHeadResource].self, forKey: .chains)
        signedAt = try c.decode(String.self, forKey: .signedAt)
        signedAtUs = try c.decode(Int64.self, forKey: .signedAtUs)
        algorithm = try c.decode(String.self, forKey: .algorithm)
        publicKey = try c.decode(String.self, forKey: .publicKey)
        keyID = try c.decodeIfPresent(String.self, forKey: .keyID)
        signature = try c.decode(String.self, forKey: .signature)
    }

    /// False when `key_id` is present but is not the id of `public_key`.
    public var keyIDMatches: Bool {
        guard let keyID else { return true }
        return Hex.decode(publicKey).map { Ed25519PublicKey.keyID(rawRepresentation: $0) } == keyID
    }

    /// The checkpoint these fields describe, if they are well-formed: hex of the right lengths and,
    /// for version 2, at least one chain, in strictly ascending order, whose highest head is `seq`.
    public var checkpoint: AuditCheckpoint? {
        guard let key = Hex.decode(publicKey), let signature = Hex.decode(signature) else { return nil }
        switch version {
        case 1:
            guard let headHash, let head = Hex.decode(headHash), head.count == 32 else { return nil }
            return AuditCheckpoint(seq: seq, headHash: head, signedAtMicros: signedAtUs, publicKey: key, signature: signature)
        case 2:
            let heads = (chains ?? []).compactMap(\.head)
            guard !heads.isEmpty, heads.count == chains?.count, zip(heads, heads.dropFirst()).allSatisfy({ $0.chain < $1.chain }),
                  heads.map(\.seq).max() == seq else { return nil }
            return AuditCheckpoint(heads: heads, signedAtMicros: signedAtUs, publicKey: key, signature: signature)
        default:
            return nil
        }
    }
}
