import Foundation

/// Filters and a page position for reading the audit log (oldest first).
public struct AuditQuery: Sendable, Equatable {
    /// Events at or after this time.
    public var since: Date?
    /// Events before this time.
    public var until: Date?
    /// Events by this API key.
    public var actorKeyID: UUID?
    /// Events with this action.
    public var action: String?
    /// Events about this subject.
    public var subject: String?
    /// Page size.
    public var limit: Int
    /// Events after this sequence number (keyset paging).
    public var afterSeq: Int64?

    /// Creates a query.
    public init(since: Date? = nil, until: Date? = nil, actorKeyID: UUID? = nil, action: String? = nil, subject: String? = nil,
                limit: Int = 100, afterSeq: Int64? = nil) {
        self.since = since
        self.until = until
        self.actorKeyID = actorKeyID
        self.action = action
        self.subject = subject
        self.limit = limit
        self.afterSeq = afterSeq
    }
}
