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
}
