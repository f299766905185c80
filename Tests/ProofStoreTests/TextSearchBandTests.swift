import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// Read 3 of a text search asks the bands of `delivery_search_text` newest first and stops at a
/// full page (migration 0021): a word common in old deliveries and absent from the newest costs
/// the bands down to the first that fills the page, not every match.
@Suite("Text search by band", .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason)))
struct TextSearchBandTests {
    static let bandSize = Int64(1) << DeliverySearchConditions.bandShift

    @Test("plans: a common old word reads the newest bands down to the one that fills the page, custom and generic plans alike")
    func stopsAtTheFullBand() async throws {
        try await ScratchDatabase.with(prefix: "search_bands", poolSize: 1) { scratch, database in
            // Four bands of 30,000 deliveries each (seq = band × 32,768 + i): bands nearly as full as
            // in production, where the planner weighs a band's trigram index against reading the band.
            // "Main Street" is in every other delivery of bands 0 and 1, in none of bands 2 and 3. The
            // seqs are chosen, so as the owner (the runtime role cannot override an identity); then
            // ANALYZE, as production has it.
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("""
                    INSERT INTO deliveries (seq, reference, recipient_name, address) OVERRIDING SYSTEM VALUE
                    SELECT b * \(Self.bandSize) + i, 'TB-' || b || '-' || i, 'Recipient ' || i,
                           i || CASE WHEN b < 2 AND i % 2 = 0 THEN ' Main Street' ELSE ' Elm Road' END
                    FROM generate_series(0, 3) b, generate_series(1, 30000) i
                    """)
                _ = try await owner.query("VACUUM ANALYZE deliveries")
                _ = try await owner.query("VACUUM ANALYZE delivery_search_text")
            }
            let search = DeliverySearch(text: try #require(DeliveryTextQuery("main street")))
            let below = 3 * Self.bandSize + 30001
            let query = DeliveryRepository.indexedQuery(search, below: below, limit: 51)
            let newest = (0..<51).map { Self.bandSize + 30000 - 2 * Int64($0) }
            for mode in ["force_custom_plan", "force_generic_plan"] {
                let plan = try await database.withTransaction { session in
                    try await session.query("SET LOCAL plan_cache_mode = \(unescaped: mode)")
                    for setting in DeliveryRepository.indexedSettings(search) { try await session.execute(setting) }
                    try await session.query("PREPARE banded AS \(unescaped: query.sql)")
                    let plan = try await DeliverySearchTests.explain(session, "banded", query, analyze: true)
                    try await session.query("DEALLOCATE banded")
                    return plan
                }
                // Bands 3, 2 and 1 asked; band 1's 15,000 matches read; band 0 never asked. Reading
                // every match and sorting (the plan before 0021) reads all 30,000 in one scan.
                let scans = DeliverySearchTests.nodes(plan).filter { $0.relation == "delivery_search_text" }
                #expect(!scans.isEmpty && scans.allSatisfy { $0.loops == 3 && ($0.rows ?? 0) * ($0.loops ?? 0) <= 15_000 }, "\(mode): \(plan)")
                #expect(DeliverySearchTests.nodes(plan).contains { $0.index == "delivery_search_text_band_trgm" }, "\(mode): \(plan)")
            }
            let page = try await database.query(query).rows.map { try $0.decode(Int64.self, "seq") }
            #expect(page == newest)
            // With another filter each band's matches are looked up as deliveries: the same page.
            var pending = search
            pending.status = .pending
            let filtered = try await database.query(DeliveryRepository.indexedQuery(pending, below: below, limit: 51))
            #expect(try filtered.rows.map { try $0.decode(Int64.self, "seq") } == newest)
            pending.status = .delivered
            #expect(try await database.query(DeliveryRepository.indexedQuery(pending, below: below, limit: 51)).rows.isEmpty)
            // A rare word asks every band and finds its one delivery in each.
            let rare = DeliverySearch(text: try #require(DeliveryTextQuery("29999 elm")))
            let rows = try await database.query(DeliveryRepository.indexedQuery(rare, below: below, limit: 51)).rows
            #expect(try rows.map { try $0.decode(Int64.self, "seq") } == [3, 2, 1, 0].map { $0 * Self.bandSize + 29999 })
        }
    }
}
