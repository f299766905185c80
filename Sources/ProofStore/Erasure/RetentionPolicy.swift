/// How long a deployment keeps a delivery's personal data (`RETENTION_DAYS`, migration 0027):
/// forever (until erased on request), or so many days after the delivery was created, after which
/// the retention job erases it unless it is pending or under a legal hold.
public enum RetentionPolicy: Sendable, Equatable, CustomStringConvertible {
    case forever
    case days(Int)

    /// The range the database admits (`retention_policy_days`).
    public static let allowedDays = 1...36_500

    /// The policy of `retention_policy.days` (NULL: forever).
    public init(days: Int?) {
        self = days.map(RetentionPolicy.days) ?? .forever
    }

    /// `retention_policy.days`: nil for ``forever``.
    public var days: Int? {
        if case .days(let days) = self { return days }
        return nil
    }

    /// `RETENTION_DAYS`'s spelling: a number of days, or `none`.
    public var description: String { days.map { "\($0) days" } ?? "none" }
}
