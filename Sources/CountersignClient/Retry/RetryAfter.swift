import Foundation

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// Seconds to wait, or `nil` when the value is absent or malformed (the caller then uses
    /// its own backoff). A date in the past is 0. `now` is injected for tests.
    public static func seconds(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Digits only; a huge number saturates rather than failing.
            return Double(value).map { min($0, 86_400 * 365) }
        }
        // asctime pads the day with a space ("Nov  6"); one space between fields reads every form.
        let fields = value.split(separator: " ").joined(separator: " ")
        for format in dateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: 0)
            formatter.dateFormat = format
            if let date = formatter.date(from: fields) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }

    /// IMF-fixdate, then the obsolete RFC 850 and asctime forms a recipient must accept.
    static let dateFormats = ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"]
}
