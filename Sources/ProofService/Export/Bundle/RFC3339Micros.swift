/// RFC 3339 text from exact microseconds, by arithmetic: the same text as
/// ``RFC3339Timestamp/format(_:offsetMinutes:)`` (milliseconds, `Z` or `±hh:mm`) without a
/// formatter per call, which cost more than the rest of a proof's metadata.
enum RFC3339Micros {
    static func format(_ micros: Int64, offsetMinutes: Int) -> String {
        // Milliseconds, rounded half away from zero as the Date formatter path rounds.
        let millis = micros >= 0 ? (micros + 500) / 1000 : -((-micros + 500) / 1000)
        let local = millis + Int64(offsetMinutes) * 60_000
        let days = local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000
        let inDay = local - days * 86_400_000
        let (year, month, day) = civil(days: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(inDay / 3_600_000, 2) + ":"
            + pad(inDay / 60_000 % 60, 2) + ":" + pad(inDay / 1000 % 60, 2) + "." + pad(inDay % 1000, 3)
        if offsetMinutes == 0 { return text + "Z" }
        let magnitude = Int64(abs(offsetMinutes))
        text += (offsetMinutes < 0 ? "-" : "+") + pad(magnitude / 60, 2) + ":" + pad(magnitude % 60, 2)
        return text
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// Year, month, day of `days` since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
