import Cryptography
import ProofStore

/// One chain's head in JSON: `{"chain":0,"head_seq":42,"head_hash":"<64 hex>"}` (verification
/// results and version 2 checkpoints).
public struct ChainHeadResource: Codable, Equatable {
    public var chain: Int16
    public var headSeq: Int64
    public var headHash: String

    enum CodingKeys: String, CodingKey {
        case chain
        case headSeq = "head_seq", headHash = "head_hash"
    }

    public init(_ head: AuditChainHead) {
        chain = head.chain
        headSeq = head.seq
        headHash = head.hash.hexString
    }

    /// The head, if the hash is 32 bytes of hex.
    public var head: AuditChainHead? {
        guard let hash = Hex.decode(headHash), hash.count == 32 else { return nil }
        return AuditChainHead(chain: chain, seq: headSeq, hash: hash)
    }
}
