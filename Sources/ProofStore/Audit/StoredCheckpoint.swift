/// A checkpoint as `audit_checkpoints` keeps it: the signed statement and its row id.
public struct StoredCheckpoint: Sendable, Equatable {
    /// `audit_checkpoints.id`: increases with every stored checkpoint (keyset paging).
    public var id: Int64
    /// The signed checkpoint.
    public var checkpoint: AuditCheckpoint

    /// Pairs a checkpoint with its row id.
    public init(id: Int64, checkpoint: AuditCheckpoint) {
        self.id = id
        self.checkpoint = checkpoint
    }
}
