/// Calendar dates from day counts without Foundation's calendars: ZIP entry times and the export's
/// RFC 3339 texts are written per file, where a formatter would cost more than the file.
public enum CivilDate {
    /// Year, month, day of `days` since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    public static func from(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    /// Days since 1970-01-01 of `year`-`month`-`day` (proleptic Gregorian, as PostgreSQL counts;
    /// Foundation's Gregorian calendar turns Julian before October 1582); `nil` when the day does
    /// not exist (February 30, month 13).
    public static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Days in `month` of `year` (proleptic Gregorian leap years).
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
