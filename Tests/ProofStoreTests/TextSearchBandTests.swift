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
            let mainStreet = try #require(DeliveryTextQuery("main street"))
            let search = DeliverySearch(text: mainStreet)
            let below = 3 * Self.bandSize + 30001
            let query = DeliveryRepository.textBandsQuery(search, mainStreet, below: below, limit: 51)
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
            // Each band's scan also reads the index's whole pending list: migration 0021 keeps it small.
            let options = try await database.query("""
                SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'delivery_search_text_band_trgm'
                """).decode(String.self, row: 0, column: 0)
            #expect(options == "gin_pending_list_limit=64")
            // With another filter each band's matches are looked up as deliveries: the same page.
            var pending = search
            pending.status = .pending
            let filtered = try await database.query(DeliveryRepository.textBandsQuery(pending, mainStreet, below: below, limit: 51))
            #expect(try filtered.rows.map { try $0.decode(Int64.self, "seq") } == newest)
            pending.status = .delivered
            #expect(try await database.query(DeliveryRepository.textBandsQuery(pending, mainStreet, below: below, limit: 51)).rows.isEmpty)
            // A rare word asks every band and finds its one delivery in each.
            let elm = try #require(DeliveryTextQuery("29999 elm"))
            let rare = DeliverySearch(text: elm)
            let rows = try await database.query(DeliveryRepository.textBandsQuery(rare, elm, below: below, limit: 51)).rows
            #expect(try rows.map { try $0.decode(Int64.self, "seq") } == [3, 2, 1, 0].map { $0 * Self.bandSize + 29999 })
            // Through the search, a page at a time: each cursor lands in another band; and a cursor
            // in the middle of a band continues below it.
            let deliveries = DeliveryRepository(database: database)
            var paged: [Int64] = []
            var next = DeliverySearch(text: elm, limit: 1)
            while true {
                let page = try await deliveries.search(next)
                paged += page.deliveries.map(\.seq)
                guard let after = page.nextSeq, paged.count < 8 else { break }
                next.afterSeq = after
            }
            #expect(paged == [3, 2, 1, 0].map { $0 * Self.bandSize + 29999 })
            let middle = try await deliveries.search(DeliverySearch(text: mainStreet, limit: 3, afterSeq: Self.bandSize + 1000))
            #expect(middle.deliveries.map(\.seq) == [998, 996, 994].map { Self.bandSize + $0 })
        }
    }

    @Test("signers, references, recipients and addresses merge into one page, the same at every window size and across pages")
    func mergesSignersWithBands() async throws {
        try await ScratchDatabase.with(prefix: "search_merge") { _, database in
            let deliveries = DeliveryRepository(database: database)
            let proofs = ProofRepository(database: database)
            let key = try await APIKeyRepository(database: database).create(name: "courier", role: .courier).key.id
            let grace = try #require(DeliveryTextQuery("grace"))
            #expect(try await deliveries.search(DeliverySearch(text: grace)).deliveries.isEmpty)   // no deliveries at all
            // (reference, recipient, address, signer): "grace" by signer only, by recipient only, by
            // reference prefix, by recipient and signer (one delivery, listed once), by address.
            let rows: [(String, String, String, String?)] = [
                ("SIG-0", "R", "A", "Grace Hopper"), ("SIG-1", "Grace Kelly", "A", nil), ("SIG-2", "Ada", "A", "Grace Jones"),
                ("GRACE-3", "R", "A", nil), ("SIG-4", "Grace Hopper", "A", "Grace Hopper"), ("SIG-5", "Bob", "A", "Bob"),
                ("SIG-6", "R", "1 Grace Street", nil), ("SIG-7", "R", "A", nil),
            ]
            for (reference, name, address, signer) in rows {
                _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: name, address: address, destination: nil), by: nil)
                if let signer { _ = try await proofs.record(.sample(uploadedBy: key, signer: signer), reference: reference) }
            }
            let expected = ["SIG-6", "SIG-4", "GRACE-3", "SIG-2", "SIG-1", "SIG-0"]
            for window in DeliverySearchTests.windows {
                for limit in [1, 2, 50] {
                    var search = DeliverySearch(text: grace, limit: limit)
                    var seen: [String] = []
                    while true {
                        let page = try await deliveries.search(search, window: window)
                        seen += page.deliveries.map(\.reference)
                        guard let next = page.nextSeq, seen.count <= rows.count else { break }
                        search.afterSeq = next
                    }
                    #expect(seen == expected, "window \(window), limit \(limit)")
                }
                var delivered = DeliverySearch(status: .delivered, text: grace)
                #expect(try await deliveries.search(delivered, window: window).deliveries.map(\.reference) == ["SIG-4", "SIG-2", "SIG-0"])
                let hopper = try #require(DeliveryTextQuery("hopper"))
                delivered.text = hopper
                #expect(try await deliveries.search(delivered, window: window).deliveries.map(\.reference) == ["SIG-4", "SIG-0"])
            }
        }
    }
}
