import Cryptography
import Foundation
import ProofStore

/// A signed audit checkpoint as `GET /v1/audit/checkpoint` returns it and export manifests embed it
/// (hex for bytes; `signed_at_us` is the exact time the signature covers).
struct CheckpointResource: Codable, Equatable {
    var seq: Int64
    var headHash: String
    var signedAt: String
    var signedAtUs: Int64
    var algorithm: String
    var publicKey: String
    var signature: String

    enum CodingKeys: String, CodingKey {
        case seq, algorithm, signature
        case headHash = "head_hash", signedAt = "signed_at", signedAtUs = "signed_at_us", publicKey = "public_key"
    }

    init(_ checkpoint: AuditCheckpoint) {
        seq = checkpoint.seq
        headHash = checkpoint.headHash.hexString
        signedAt = RFC3339Timestamp.format(checkpoint.signedAt)
        signedAtUs = checkpoint.signedAtMicros
        algorithm = AuditCheckpoint.algorithm
        publicKey = checkpoint.publicKey.hexString
        signature = checkpoint.signature.hexString
    }

    /// The checkpoint these fields describe, if they are well-formed hex.
    var checkpoint: AuditCheckpoint? {
        guard let head = Hex.decode(headHash), let key = Hex.decode(publicKey), let signature = Hex.decode(signature) else {
            return nil
        }
        return AuditCheckpoint(seq: seq, headHash: head, signedAtMicros: signedAtUs, publicKey: key, signature: signature)
    }
}
