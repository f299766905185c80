/// The newest event of one audit chain: what `audit_chains` stores, what a version 2 checkpoint
/// signs for every chain, and what verification reports. An empty chain is `seq` 0 with the
/// genesis hash (32 zero bytes).
public struct AuditChainHead: Sendable, Equatable, Hashable {
    /// The chain number (0 ..< ``AuditLog/chainCount``).
    public var chain: Int16
    /// The head event's global sequence number (0 while the chain is empty).
    public var seq: Int64
    /// The head event's hash (the genesis hash while the chain is empty).
    public var hash: [UInt8]

    /// Creates a head.
    public init(chain: Int16, seq: Int64, hash: [UInt8]) {
        self.chain = chain
        self.seq = seq
        self.hash = hash
    }

    /// The head of an empty chain.
    public static func empty(_ chain: Int16) -> AuditChainHead {
        AuditChainHead(chain: chain, seq: 0, hash: AuditEvent.genesisHash)
    }

    /// Bytes per head in the encoded list.
    public static let encodedSize = 42

    /// The heads as the checkpoint message and `audit_checkpoints.heads` carry them: per head, the
    /// chain as a 2-byte and seq as an 8-byte big-endian signed integer, then the 32-byte hash.
    public static func encode(_ heads: [AuditChainHead]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(heads.count * encodedSize)
        for head in heads {
            withUnsafeBytes(of: head.chain.bigEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: head.seq.bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: head.hash)
        }
        return out
    }

    /// The inverse of ``encode(_:)``; `nil` unless `bytes` is a whole number of 42-byte entries.
    public static func decode(_ bytes: [UInt8]) -> [AuditChainHead]? {
        guard !bytes.isEmpty, bytes.count % encodedSize == 0 else { return nil }
        var heads: [AuditChainHead] = []
        var index = 0
        while index < bytes.count {
            let chain = bytes[index..<index + 2].reduce(0) { $0 << 8 | UInt16($1) }
            let seq = bytes[index + 2..<index + 10].reduce(0) { $0 << 8 | UInt64($1) }
            heads.append(AuditChainHead(chain: Int16(bitPattern: chain), seq: Int64(bitPattern: seq),
                                        hash: Array(bytes[index + 10..<index + encodedSize])))
            index += encodedSize
        }
        return heads
    }
}
