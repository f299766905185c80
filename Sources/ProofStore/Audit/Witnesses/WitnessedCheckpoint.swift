/// A checkpoint read back from a witness (a file of the witness directory), for verification.
public struct WitnessedCheckpoint: Sendable, Equatable {
    /// Where it was read: the file name, reported in breaks as `witness:<name>`.
    public var name: String
    /// The signed checkpoint.
    public var checkpoint: AuditCheckpoint

    /// Names a witnessed checkpoint.
    public init(name: String, checkpoint: AuditCheckpoint) {
        self.name = name
        self.checkpoint = checkpoint
    }
}
