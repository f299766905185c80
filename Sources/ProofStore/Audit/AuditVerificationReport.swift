/// What `verify --database` found, with what the witnesses add: how many witnessed checkpoints
/// were checked, where an incremental run started, and the unwitnessed window.
public struct AuditVerificationReport: Sendable, Equatable {
    /// The events and heads after the newest witnessed checkpoint: what an insider could still cut
    /// or rewrite without any witness noticing.
    public struct UnwitnessedWindow: Sendable, Equatable {
        /// The newest witnessed checkpoint (its file name).
        public var since: String
        /// When it was signed (microseconds since the Unix epoch).
        public var signedAtMicros: Int64
        /// Events in the database that it does not cover.
        public var events: Int64
        /// Seconds from its signing to the end of verification.
        public var seconds: Double
    }

    /// The walk's outcome (`count` is the events walked: only those after ``startedAfter`` when set).
    public var result: AuditVerification
    /// Witnessed checkpoints checked against the database.
    public var witnessedChecked: Int
    /// The witnessed checkpoint an incremental run trusted history up to, if it was one.
    public var startedAfter: String?
    /// `nil` when no witnessed checkpoint was given.
    public var window: UnwitnessedWindow?
    /// Witnessed checkpoints whose RFC 3161 token verified (`nil`: tokens were not checked).
    public var timestamped: Int?
    /// Deliveries the walk found erased (migration 0026), each with its `delivery_erased` event:
    /// their events' hashes were checked, their personal facts could no longer be.
    public var erasedDeliveries: [String] = []

    public init(result: AuditVerification, witnessedChecked: Int = 0, startedAfter: String? = nil, window: UnwitnessedWindow? = nil) {
        self.result = result
        self.witnessedChecked = witnessedChecked
        self.startedAfter = startedAfter
        self.window = window
    }
}
