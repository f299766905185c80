import Archive
import Foundation
import Postgres

/// An RFC 3339 timestamp that must carry its UTC offset (`2025-03-01T14:05:09.250+01:00` or `...Z`).
public struct RFC3339Timestamp: Sendable, Equatable {
    /// The instant.
    public var date: Date
    /// The offset from UTC in minutes, as written.
    public var offsetMinutes: Int
    /// The text as given.
    public var text: String

    /// Why a timestamp was refused.
    public enum Failure: Error, Sendable, Equatable {
        /// Not RFC 3339 at all.
        case malformed
        /// Well formed but without `Z` or `±hh:mm`.
        case missingOffset
        /// Fields out of range (month 13, minute 61, ...).
        case outOfRange
    }

    /// Parses `text`.
    public init(parsing text: String) throws(Failure) {
        let b = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard b.count >= 19, let year = digits(0, 4), b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D,
              let day = digits(8, 2), b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20,
              let hour = digits(11, 2), b[13] == 0x3A, let minute = digits(14, 2), b[16] == 0x3A, let second = digits(17, 2)
        else { throw .malformed }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, (0x30...0x39).contains(b[i]) {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start, i - start <= 9 else { throw .malformed }
        }
        var offset = 0
        if i == b.count { throw .missingOffset }
        switch b[i] {
        case 0x5A, 0x7A:
            i += 1
        case 0x2B, 0x2D:
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2), om < 60 else {
                throw .malformed
            }
            // RFC 3339 allows any offset the pattern can write; real zones lie within ±18:00.
            guard oh * 60 + om <= 18 * 60 else { throw .outOfRange }
            offset = (oh * 60 + om) * (b[i] == 0x2D ? -1 : 1)
            i += 6
        default:
            throw .malformed
        }
        guard i == b.count else { throw .malformed }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { throw .outOfRange }
        // By arithmetic, proleptic Gregorian as PostgreSQL and RFC3339Micros count: Foundation's
        // calendar is Julian before 1582, so `0001-01-01` came back two days early.
        guard let days = CivilDate.daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day)) else { throw .outOfRange }
        // The same floating-point steps as before (whole seconds since 2001, then the rest), so
        // every timestamp after 1582 gives the very same Date, and so the same stored microseconds.
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
        let base = Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200))
        self.date = base.addingTimeInterval(fraction - Double(offset * 60) + (second == 60 ? 1 : 0))
        self.offsetMinutes = offset
        self.text = text
    }

    /// `date` as RFC 3339 in UTC with milliseconds, e.g. `2025-03-01T13:05:09.250Z`: the
    /// microseconds PostgreSQL stores for it, rounded to the millisecond by ``RFC3339Micros``, the
    /// arithmetic the bundles use. (Foundation's fractional seconds truncated the binary `Double`:
    /// `.352`, held as `.35199…`, printed `.351` for about half of all milliseconds.)
    public static func format(_ date: Date) -> String {
        RFC3339Micros.format(PostgresEpoch.unixMicros(date), offsetMinutes: 0)
    }

    /// `date` shown at `offsetMinutes` from UTC, e.g. `2025-03-01T14:05:09.250+01:00`.
    public static func format(_ date: Date, offsetMinutes: Int) -> String {
        RFC3339Micros.format(PostgresEpoch.unixMicros(date), offsetMinutes: offsetMinutes)
    }
}
