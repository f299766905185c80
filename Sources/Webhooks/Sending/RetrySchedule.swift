import Foundation

/// When to try a failed delivery again: exponential backoff (base × 2^attempt, capped) with full
/// jitter in its upper half, never sooner than the receiver's `Retry-After`, and no more once an
/// attempt has failed `window` after the delivery was queued — so every delivery is tried for at
/// least the whole window.
public struct RetrySchedule: Sendable {
    public var base: Duration
    public var maximum: Duration
    public var window: Duration

    public init(base: Duration, maximum: Duration, window: Duration) {
        self.base = base
        self.maximum = maximum
        self.window = window
    }

    /// The next attempt after attempt number `attempt` (1 = the first) failed at `now`, or nil when
    /// the window is spent. `jitter` in 0...1 (injected in tests).
    public func nextAttempt(after attempt: Int, queuedAt: Date, now: Date, retryAfter: Duration?,
                            jitter: Double = Double.random(in: 0...1)) -> Date? {
        guard now.timeIntervalSince(queuedAt) < window.seconds else { return nil }
        let exponential = base.seconds * pow(2, Double(min(max(attempt - 1, 0), 30)))
        let capped = min(exponential, maximum.seconds)
        var delay = capped / 2 + capped / 2 * jitter
        if let retryAfter { delay = max(delay, min(retryAfter.seconds, 86_400)) }
        return now.addingTimeInterval(delay)
    }

    /// A `Retry-After` header (RFC 9110: seconds, or an HTTP date) as a delay from `now`.
    public static func parseRetryAfter(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
