import Foundation
@testable import ProofService
import Testing

/// The verifier's on-disk index of `proof_recorded` events (issue 23: flat memory).
@Suite("Bundle event table")
struct BundleEventTableTests {
    static func record(_ id: UUID, seq: Int64) -> BundleEventTable.Record {
        BundleEventTable.Record(id: id, seq: seq, chain: Int16(seq % 16), flags: UInt8(seq % 16),
                                binding: Digest32(Array((0..<32).map { UInt8(truncatingIfNeeded: Int(seq) &* 31 &+ $0) })))
    }

    static func sealed(_ table: BundleEventTable) throws -> [BundleEventTable.Record] {
        var duplicates: [BundleEventTable.Record] = []
        try table.seal { duplicates.append($0) }
        return duplicates
    }

    /// 20,000 records, two of them repeated, in windows of `windowSlots`: 64 slots make 1,024
    /// windows, so records probe past a window's end and past the table's last slot.
    @Test("every record is found once, duplicates are reported and replace the earlier one", arguments: [BundleEventTable.windowSlots, 64])
    func roundTrip(windowSlots: Int) throws {
        let table = try BundleEventTable(windowSlots: windowSlots)
        let ids = (0..<20_000).map { _ in UUID() }
        for (seq, id) in ids.enumerated() { try table.append(Self.record(id, seq: Int64(seq))) }
        // A second event for two proofs: the later one wins, and both are reported.
        try table.append(Self.record(ids[7], seq: 50_007))
        try table.append(Self.record(ids[19_999], seq: 50_008))
        let duplicates = try Self.sealed(table)
        #expect(Set(duplicates.map(\.id)) == [ids[7], ids[19_999]] && duplicates.count == 2)
        for (seq, id) in ids.enumerated() {
            let expected = seq == 7 ? Self.record(id, seq: 50_007) : seq == 19_999 ? Self.record(id, seq: 50_008) : Self.record(id, seq: Int64(seq))
            #expect(try table.take(id) == expected)
        }
        for id in ids.prefix(100) { #expect(try table.take(id) == nil) }
        #expect(try table.take(UUID()) == nil)
    }

    /// A forged bundle repeating one event: each copy is reported as it is placed (the caller
    /// counts them past its limit), none is kept, and the last is the one found.
    @Test("one id repeated 30,000 times is reported 29,999 times and found once")
    func repeatedID() throws {
        let table = try BundleEventTable(windowSlots: 256)
        let id = UUID(), other = UUID()
        try table.append(Self.record(other, seq: 1))
        for seq in 0..<30_000 { try table.append(Self.record(id, seq: Int64(100 + seq))) }
        var reported = 0
        try table.seal { duplicate in
            #expect(duplicate.id == id)
            reported += 1
        }
        #expect(reported == 29_999)
        #expect(try table.take(id) == Self.record(id, seq: 30_099))
        #expect(try table.take(id) == nil)
        #expect(try table.take(other) == Self.record(other, seq: 1))
    }

    @Test("an empty table finds nothing")
    func empty() throws {
        let table = try BundleEventTable()
        #expect(try Self.sealed(table).isEmpty)
        #expect(try table.take(UUID()) == nil)
    }
}
