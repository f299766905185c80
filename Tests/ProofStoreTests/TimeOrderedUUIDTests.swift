import Foundation
@testable import ProofStore
import Testing

/// UUID version 7 as RFC 9562 lays it out, from a fixed time and fixed random bits.
@Suite("Time-ordered UUIDs")
struct TimeOrderedUUIDTests {
    /// Hands out the same 64 bits every time: the layout can be checked bit for bit.
    struct ConstantBits: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { value }
    }

    @Test("the time in milliseconds in the first 48 bits, version 7, variant 10, the rest from the generator")
    func layout() {
        // 1,795,896,000,123 ms (2026-11-28T20:00:00.123Z) = 0x01A2_23BE_3E7B.
        let date = Date(timeIntervalSince1970: 1_795_896_000.123_4)
        var ones = ConstantBits(value: .max), zeros = ConstantBits(value: 0)
        #expect(UUID.timeOrdered(at: date, using: &ones).uuidString == "01A223BE-3E7B-7FFF-BFFF-FFFFFFFFFFFF")
        #expect(UUID.timeOrdered(at: date, using: &zeros).uuidString == "01A223BE-3E7B-7000-8000-000000000000")
        // Before 1970 there is no such time: the earliest one, not a trap.
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: -5), using: &zeros).uuidString == "00000000-0000-7000-8000-000000000000")
    }

    @Test("later milliseconds sort later byte for byte, as PostgreSQL orders uuid; the same millisecond still differs")
    func ordering() {
        let start = Date(timeIntervalSince1970: 1_795_896_000)
        let ids = (0..<2_000).map { UUID.timeOrdered(at: start.addingTimeInterval(Double($0) / 1000)) }
        func bytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { bytes($0).lexicographicallyPrecedes(bytes($1)) })
        let same = (0..<2_000).map { _ in UUID.timeOrdered(at: start) }
        #expect(Set(same).count == same.count)
        #expect(same.allSatisfy { $0.uuidString.hasPrefix("01A223BE-3E00-7") })
    }
}
