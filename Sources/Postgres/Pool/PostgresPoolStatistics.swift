/// Counters describing a pool at one moment.
public struct PostgresPoolStatistics: Sendable, Equatable {
    /// Maximum connections.
    public var capacity: Int
    /// Connections open or being opened.
    public var open: Int
    /// Open connections not leased.
    public var idle: Int
    /// Callers waiting for a connection.
    public var waiting: Int
    /// Acquisitions that had to wait because every connection was leased (cumulative).
    public var totalWaits: Int = 0
    /// Waiting acquisitions that failed with `poolTimeout` (cumulative).
    public var totalTimeouts: Int = 0
    /// Connections leased right now.
    public var inUse: Int { open - idle }
}
