import Foundation
import ProofService
import Testing

/// `RFC3339Timestamp.format`: the millisecond written is the date's own, rounded, for every
/// millisecond of a second, after and before 1970.
@Suite("RFC 3339 output")
struct RFC3339FormatTests {
    @Test("every millisecond prints as itself, never one below (Foundation truncates the Double)")
    func everyMillisecond() {
        // 2026-11-28T20:59:21Z, then a second of 1969.
        for (base, prefix) in [(Int64(1_795_899_561_000), "2026-11-28T20:59:21."), (Int64(-2_000), "1969-12-31T23:59:58.")] {
            for millisecond in Int64(0)..<1000 {
                let date = Date(timeIntervalSince1970: Double(base + millisecond) / 1000)
                let digits = String(millisecond)
                #expect(RFC3339Timestamp.format(date) == prefix + String(repeating: "0", count: 3 - digits.count) + digits + "Z")
            }
        }
        // Rounded to the nearest millisecond, also up into the next second.
        #expect(RFC3339Timestamp.format(Date(timeIntervalSince1970: 1_795_899_561.999_6)) == "2026-11-28T20:59:22.000Z")
        #expect(RFC3339Timestamp.format(Date(timeIntervalSince1970: 1_795_899_561.250_4), offsetMinutes: 60) == "2026-11-28T21:59:21.250+01:00")
    }

    @Test("parsing counts proleptic Gregorian days, as PostgreSQL does: year 1 reads back as year 1, and every date as Foundation read it after 1582")
    func parsesEveryYear() throws {
        // Issue 41: Foundation's calendar is Julian before 1582, so `since=0001-01-01` became 0000-12-30.
        for text in ["0001-01-01T00:00:00.000Z", "1200-02-29T12:00:00.000Z", "1582-10-04T00:00:00.000Z", "1600-02-29T23:59:59.999Z",
                     "1969-12-31T23:59:59.999Z", "2024-02-29T00:00:00.000Z", "9999-12-31T23:59:59.999Z"] {
            #expect(RFC3339Timestamp.format(try RFC3339Timestamp(parsing: text).date) == text)
        }
        #expect(try RFC3339Timestamp(parsing: "0001-01-01T00:00:00Z").date.timeIntervalSince1970 == -62_135_596_800)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        for text in ["2025-03-01T14:05:09.352+01:00", "1999-12-31T23:59:60Z", "2030-06-30T23:59:59.123456-07:30", "1970-01-01T00:00:00Z"] {
            let parsed = try RFC3339Timestamp(parsing: text)
            var components = DateComponents()
            components.calendar = calendar
            components.timeZone = calendar.timeZone
            (components.year, components.month, components.day) = (Int(text.prefix(4))!, Int(text.dropFirst(5).prefix(2))!, Int(text.dropFirst(8).prefix(2))!)
            (components.hour, components.minute, components.second) = (Int(text.dropFirst(11).prefix(2))!, Int(text.dropFirst(14).prefix(2))!,
                                                                        min(59, Int(text.dropFirst(17).prefix(2))!))
            let base = try #require(components.date)
            let fraction = text.dropFirst(19).prefix { $0.isNumber || $0 == "." }
            let offset = parsed.offsetMinutes
            let expected = base.addingTimeInterval((Double("0" + fraction) ?? 0) - Double(offset * 60) + (text.dropFirst(17).hasPrefix("60") ? 1 : 0))
            #expect(parsed.date == expected, "\(text)")
        }
        #expect(throws: RFC3339Timestamp.Failure.outOfRange) { try RFC3339Timestamp(parsing: "2023-02-29T00:00:00Z") }
        #expect(throws: RFC3339Timestamp.Failure.outOfRange) { try RFC3339Timestamp(parsing: "1900-02-29T00:00:00Z") }
        #expect(throws: RFC3339Timestamp.Failure.outOfRange) { try RFC3339Timestamp(parsing: "2024-04-31T00:00:00Z") }
    }
}
