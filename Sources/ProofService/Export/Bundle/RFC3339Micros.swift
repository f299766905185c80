import Archive

/// RFC 3339 text from exact microseconds, by arithmetic (milliseconds, `Z` or `±hh:mm`): what
/// ``RFC3339Timestamp/format(_:offsetMinutes:)`` writes for every date. A formatter per call cost
/// more than the rest of a proof's metadata, and Foundation's truncated the millisecond.
enum RFC3339Micros {
    static func format(_ micros: Int64, offsetMinutes: Int) -> String {
        // Milliseconds, rounded half away from zero.
        let millis = micros >= 0 ? (micros + 500) / 1000 : -((-micros + 500) / 1000)
        let local = millis + Int64(offsetMinutes) * 60_000
        let days = local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000
        let inDay = local - days * 86_400_000
        let (year, month, day) = CivilDate.from(daysSince1970: days)
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

}
