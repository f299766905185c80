/// One page of audit events and where the next one starts.
public struct AuditPage: Sendable, Equatable {
    /// The events, by ascending seq.
    public var events: [AuditEvent]
    /// The seq to pass as ``AuditQuery/afterSeq`` for the next page; `nil` on the last page.
    public var nextSeq: Int64?
}
