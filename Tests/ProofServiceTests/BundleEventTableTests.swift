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

    @Test("every record is found once, duplicates are reported and replace the earlier one")
    func roundTrip() throws {
        let table = try BundleEventTable()
        let ids = (0..<20_000).map { _ in UUID() }
        for (seq, id) in ids.enumerated() { try table.append(Self.record(id, seq: Int64(seq))) }
        // A second event for two proofs: the later one wins, and both are reported.
        try table.append(Self.record(ids[7], seq: 50_007))
        try table.append(Self.record(ids[19_999], seq: 50_008))
        let duplicates = try table.seal()
        #expect(duplicates.map(\.id) == [ids[7], ids[19_999]])
        for (seq, id) in ids.enumerated() {
            let expected = seq == 7 ? Self.record(id, seq: 50_007) : seq == 19_999 ? Self.record(id, seq: 50_008) : Self.record(id, seq: Int64(seq))
            #expect(try table.take(id) == expected)
        }
        for id in ids.prefix(100) { #expect(try table.take(id) == nil) }
        #expect(try table.take(UUID()) == nil)
    }

    @Test("an empty table finds nothing")
    func empty() throws {
        let table = try BundleEventTable()
        #expect(try table.seal().isEmpty)
        #expect(try table.take(UUID()) == nil)
    }
}
