/// The outcome of walking the audit chains.
public enum AuditVerification: Sendable, Equatable {
    /// Every event, every chain head, every referenced proof and every stored checkpoint checked
    /// out: `count` events in all, and each chain's head (ascending chain, empty chains included).
    /// `archivedProofs` recorded proofs are gone but lie in a period a `proofs_archived` event names
    /// (check that the bundle it names exists and verifies).
    case ok(count: Int64, heads: [AuditChainHead], archivedProofs: Int64 = 0)
    /// The first place the record stops being consistent.
    case broken(AuditBreak)
}
