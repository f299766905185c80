import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// A text or flag search asks the bands of `delivery_search_text` and `proof_search` newest first
/// and stops at a full page (migrations 0021 and 0022): a word or a flag common in old deliveries
/// and absent from the newest costs the bands down to the first that fills the page, not every match.
@Suite("Search by band", .needsDatabase)
struct SearchByBandTests {
    static let bandSize = Int64(1) << DeliverySearchConditions.bandShift

    @Test("plans: a common old word, signer or flag reads the newest bands down to the one that fills the page, custom and generic plans alike")
    func stopsAtTheFullBand() async throws {
        try await ScratchDatabase.with(prefix: "search_bands", poolSize: 1) { scratch, database in
            // Four bands of 30,000 deliveries each (seq = band × 32,768 + i): bands nearly as full as
            // in production, where the planner weighs a band's index against reading the band.
            // "Main Street", a signer "Grace Hopper" and the flag no_location are in every other
            // delivery of bands 0 and 1, in none of bands 2 and 3. The seqs are chosen, and the proofs'
            // search rows written directly, so as the owner (the runtime role can do neither); then
            // ANALYZE, as production has it.
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                _ = try await owner.query("""
                    INSERT INTO deliveries (seq, reference, recipient_name, address) OVERRIDING SYSTEM VALUE
                    SELECT b * \(Self.bandSize) + i, 'TB-' || b || '-' || i, 'Recipient ' || i,
                           i || CASE WHEN b < 2 AND i % 2 = 0 THEN ' Main Street' ELSE ' Elm Road' END
                    FROM generate_series(0, 3) b, generate_series(1, 30000) i
                    """)
                _ = try await owner.query("""
                    INSERT INTO proof_search (delivery_seq, received_at, signer_name, flags)
                    SELECT b * \(Self.bandSize) + i, now(),
                           CASE WHEN b < 2 AND i % 2 = 0 THEN 'Grace Hopper' ELSE 'Ada Byron ' || i END,
                           CASE WHEN b < 2 AND i % 2 = 0 THEN '{no_location}'::text[] WHEN i % 7 = 0 THEN '{clock_ahead}' ELSE '{}' END
                    FROM generate_series(0, 3) b, generate_series(1, 30000) i
                    """)
                for table in ["deliveries", "delivery_search_text", "proof_search"] { _ = try await owner.query("VACUUM ANALYZE \(unescaped: table)") }
            }
            let mainStreet = try #require(DeliveryTextQuery("main street"))
            let hopper = try #require(DeliveryTextQuery("hopper"))
            let byron = try #require(DeliveryTextQuery("byron 29995"))
            let below = 3 * Self.bandSize + 30001
            let newest = (0..<51).map { Self.bandSize + 30000 - 2 * Int64($0) }
            // Each search, the tables it reads by band and the index each must use.
            let searches: [(DeliverySearch, [String: String])] = [
                (DeliverySearch(text: mainStreet), ["delivery_search_text": "delivery_search_text_band_trgm", "proof_search": "proof_search_band_signer"]),
                (DeliverySearch(text: hopper),
                 ["delivery_search_text": "delivery_search_text_band_trgm", "proof_search": "proof_search_band_signer"]),
                (DeliverySearch(flag: .noLocation), ["proof_search": "proof_search_band_flags"]),
            ]
            for (search, indexes) in searches {
                let query = DeliveryRepository.bandsQuery(search, below: below, limit: 51)
                for mode in ["force_custom_plan", "force_generic_plan"] {
                    let plan = try await database.withTransaction { session in
                        try await session.query("SET LOCAL plan_cache_mode = \(unescaped: mode)")
                        for setting in DeliveryRepository.bandSettings { try await session.execute(setting) }
                        try await session.query("PREPARE banded AS \(unescaped: query.sql)")
                        let plan = try await DeliverySearchTests.explain(session, "banded", query, analyze: true)
                        try await session.query("DEALLOCATE banded")
                        return plan
                    }
                    // Bands 3, 2 and 1 asked; band 1's 15,000 matches read; band 0 never asked. Reading
                    // every match and sorting (the plans before 0021 and 0022) reads all 30,000 in one scan.
                    let nodes = DeliverySearchTests.nodes(plan)
                    for (table, index) in indexes {
                        let scans = nodes.filter { $0.relation == table }
                        #expect(!scans.isEmpty && scans.allSatisfy { $0.loops == 3 && ($0.rows ?? 0) * ($0.loops ?? 0) <= 15_000 },
                                "\(search) \(mode): \(plan)")
                        #expect(nodes.contains { $0.index == index }, "\(search) \(mode) \(index): \(plan)")
                    }
                }
                let page = try await database.query(query).rows.map { try $0.decode(Int64.self, "seq") }
                #expect(page == newest, "\(search)")
            }
            // Issue 41: a text without three letters or digits in a row (no trigram) is answered by
            // the reference index alone, band by band: a prefix of many references fills the page
            // from the newest band; a shape that starts no reference asks every band for nothing.
            // Before, each of these rechecked all 30,000 rows of every band.
            for (shape, page) in [("TB-", Array(0..<51).map { 3 * Self.bandSize + 30000 - Int64($0) }), ("e s", []), ("%%%", []), ("---", [])] {
                let text = try #require(DeliveryTextQuery(shape))
                let query = DeliveryRepository.bandsQuery(DeliverySearch(text: text), below: below, limit: 51)
                let plan = try await database.withTransaction { session in
                    for setting in DeliveryRepository.bandSettings(for: DeliverySearch(text: text)) { try await session.execute(setting) }
                    try await session.query("PREPARE shaped AS \(unescaped: query.sql)")
                    let plan = try await DeliverySearchTests.explain(session, "shaped", query, analyze: true)
                    try await session.query("DEALLOCATE shaped")
                    return plan
                }
                let nodes = DeliverySearchTests.nodes(plan)
                #expect(!nodes.contains { $0.relation == "proof_search" }, "\(shape): \(plan)")
                let scans = nodes.filter { $0.relation == "delivery_search_text" }
                #expect(!scans.isEmpty && nodes.contains { $0.index == "delivery_search_text_band_reference" }
                        && !nodes.contains { $0.index == "delivery_search_text_band_trgm" }, "\(shape): \(plan)")
                // A prefix of every reference reads its newest band's matches (as any reference prefix
                // does); a shape that starts none reads no row at all.
                let read = scans.reduce(0) { $0 + ($1.rows ?? 0) * ($1.loops ?? 0) }
                #expect(page.isEmpty ? read == 0 : read <= 30_000 && scans.allSatisfy { $0.loops == 1 }, "\(shape) read \(read): \(plan)")
                let found = try await database.query(query).rows.map { try $0.decode(Int64.self, "seq") }
                #expect(found == page, "\(shape)")
            }
            // Each band's scan also reads the index's whole pending list: migrations 0021 and 0022 keep it small.
            let options = try await database.query("""
                SELECT relname, array_to_string(reloptions, ',') FROM pg_class
                WHERE relname IN ('delivery_search_text_band_trgm', 'proof_search_band_signer', 'proof_search_band_flags')
                """).rows.map { try $0.decode((String, String).self) }
            #expect(options.count == 3 && options.allSatisfy { $0.1 == "gin_pending_list_limit=64" }, "\(options)")
            // With another filter each band's matches are looked up as deliveries: the same page.
            // A flag beside a text is tested on the text's matches, by the delivery's seq.
            let seqs = { (search: DeliverySearch) in
                try await database.query(DeliveryRepository.bandsQuery(search, below: below, limit: 51)).rows.map { try $0.decode(Int64.self, "seq") }
            }
            for var filtered in [DeliverySearch(text: mainStreet), DeliverySearch(flag: .noLocation), DeliverySearch(text: mainStreet, flag: .noLocation)] {
                filtered.status = .pending
                #expect(try await seqs(filtered) == newest, "\(filtered)")
                filtered.status = .delivered
                #expect(try await seqs(filtered).isEmpty, "\(filtered)")
            }
            #expect(try await seqs(DeliverySearch(text: mainStreet, flag: .clockAhead)).isEmpty)
            #expect(try await seqs(DeliverySearch(text: byron, flag: .clockAhead))
                    == [3, 2, 1, 0].map { $0 * Self.bandSize + 29995 })
            // A rare word asks every band and finds its one delivery in each.
            let elm = try #require(DeliveryTextQuery("29999 elm"))
            let rare = DeliverySearch(text: elm)
            let rows = try await database.query(DeliveryRepository.bandsQuery(rare, below: below, limit: 51)).rows
            #expect(try rows.map { try $0.decode(Int64.self, "seq") } == [3, 2, 1, 0].map { $0 * Self.bandSize + 29999 })
            // Through the search, a page at a time: each cursor lands in another band; and a cursor
            // in the middle of a band continues below it.
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            var paged: [Int64] = []
            var next = DeliverySearch(text: elm, limit: 1)
            while true {
                let page = try await deliveries.search(next)
                paged += page.deliveries.map(\.seq)
                guard let after = page.nextSeq, paged.count < 8 else { break }
                next.afterSeq = after
            }
            #expect(paged == [3, 2, 1, 0].map { $0 * Self.bandSize + 29999 })
            for middle in [DeliverySearch(text: mainStreet, limit: 3, afterSeq: Self.bandSize + 1000),
                           DeliverySearch(flag: .noLocation, limit: 3, afterSeq: Self.bandSize + 1000)] {
                #expect(try await deliveries.search(middle).deliveries.map(\.seq) == [998, 996, 994].map { Self.bandSize + $0 }, "\(middle)")
            }
        }
    }

    @Test("signers, references, recipients and addresses merge into one page, each delivery once, at every page size")
    func mergesSignersWithBands() async throws {
        try await ScratchDatabase.with(prefix: "search_merge") { _, database in
            let fixture = try await SearchFixture(database)
            let deliveries = fixture.deliveries
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
                try await fixture.deliver(reference, recipient: name, address: address, signer: signer)
            }
            let expected = ["SIG-6", "SIG-4", "GRACE-3", "SIG-2", "SIG-1", "SIG-0"]
            for limit in [1, 2, 50] {
                var search = DeliverySearch(text: grace, limit: limit)
                var seen: [String] = []
                while true {
                    let page = try await deliveries.search(search)
                    seen += page.deliveries.map(\.reference)
                    guard let next = page.nextSeq, seen.count <= rows.count else { break }
                    search.afterSeq = next
                }
                #expect(seen == expected, "limit \(limit)")
            }
            var delivered = DeliverySearch(status: .delivered, text: grace)
            #expect(try await deliveries.search(delivered).deliveries.map(\.reference) == ["SIG-4", "SIG-2", "SIG-0"])
            let hopper = try #require(DeliveryTextQuery("hopper"))
            delivered.text = hopper
            #expect(try await deliveries.search(delivered).deliveries.map(\.reference) == ["SIG-4", "SIG-0"])
        }
    }

    @Test("0022: each proof's delivery seq, time, signer and flags are copied to proof_search by trigger; the runtime role cannot write them")
    func proofSearchRows() async throws {
        try await ScratchDatabase.with(prefix: "proof_search") { scratch, database in
            let fixture = try await SearchFixture(database)
            let deliveries = fixture.deliveries
            let flags: [[ProofFlag]] = [[], [.noLocation], [.outsideGeofence, .clockAhead]]
            for (n, flagged) in flags.enumerated() { try await fixture.deliver("PS-\(n)", signer: "Signer \(n)", flags: flagged) }
            // A proof row written straight to the table for a pending delivery, signer and flag made
            // up: its delivery does not name it, so it is never searched for, and the upload that
            // follows is.
            try await fixture.deliver("PS-3", signer: nil)
            try await fixture.insertStrayProof(for: "PS-3", signedAs: "Forged", flags: "{poor_location_accuracy}")
            try await fixture.proofs.record(.sample(uploadedBy: fixture.key, signer: "Signer 3"), reference: "PS-3")
            let copied = try await database.query("""
                SELECT d.reference, array_to_string(s.flags, ',') FROM proof_search s
                JOIN deliveries d ON d.seq = s.delivery_seq
                JOIN proofs p ON p.delivery_id = d.id AND p.received_at = s.received_at AND p.signer_name = s.signer_name AND p.flags = s.flags
                ORDER BY s.delivery_seq
                """).rows.map { try $0.decode((String, String).self) }
            #expect(copied.map { [$0.0, $0.1] } == [["PS-0", ""], ["PS-1", "no_location"], ["PS-2", "outside_geofence,clock_ahead"], ["PS-3", "no_location"]])
            #expect(try await deliveries.search(DeliverySearch(flag: .clockAhead)).deliveries.map(\.reference) == ["PS-2"])
            #expect(try await deliveries.search(DeliverySearch(flag: .noLocation)).deliveries.map(\.reference) == ["PS-3", "PS-1"])
            #expect(try await deliveries.search(DeliverySearch(flag: .poorLocationAccuracy)).deliveries.isEmpty)
            let forged = try #require(DeliveryTextQuery("forged"))
            #expect(try await deliveries.search(DeliverySearch(text: forged)).deliveries.isEmpty)
            if scratch.url != scratch.ownerURL {
                for forged in ["INSERT INTO proof_search VALUES (999, now(), 'forged', '{}')", "UPDATE proof_search SET signer_name = 'forged'",
                               "DELETE FROM proof_search", "TRUNCATE proof_search"] {
                    let error = await #expect(throws: PostgresError.self, "\(forged)") { try await database.query(PostgresQuery(unescaped: forged)) }
                    #expect(error?.sqlState == "42501", "\(forged)")
                }
                #expect(try await database.query("SELECT count(*) FROM proof_search").decode(Int.self, row: 0, column: 0) == 4)
            }
        }
    }

    @Test("0022 copies the proofs their deliveries name into proof_search, and the search finds them after the migration")
    func backfill() async throws {
        try await ScratchDatabase.with(prefix: "proof_search_mig", migratedThrough: 21) { _, database, migrations in
            try await database.withConnection { try await $0.executeScript(PreSealingStandIns.create) }
            let fixture = try await SearchFixture(database)
            let deliveries = fixture.deliveries
            try await fixture.deliver("BF-0", signer: "Back Fill 0", flags: [.noLocation])
            try await fixture.deliver("BF-1", signer: nil)
            try await fixture.deliver("BF-2", signer: "Back Fill 2", flags: [.clockAhead])
            // BF-1 stays pending; a proof row its delivery does not name is not copied.
            try await fixture.insertStrayProof(for: "BF-1", signedAs: "Back Fill stray", flags: "{no_location}")
            try await database.withConnection { try await $0.executeScript(PreSealingStandIns.drop) }
            _ = try await MigrationRunner(client: database).migrate(migrations)
            try await PreSealingStandIns.restoreKeys(in: database)
            let rows = try await database.query("""
                SELECT d.reference, s.signer_name, array_to_string(s.flags, ',') FROM proof_search s JOIN deliveries d ON d.seq = s.delivery_seq
                ORDER BY s.delivery_seq
                """).rows.map { try $0.decode((String, String, String).self) }
            #expect(rows.map { [$0.0, $0.1, $0.2] } == [["BF-0", "Back Fill 0", "no_location"], ["BF-2", "Back Fill 2", "clock_ahead"]])
            let backFill = try #require(DeliveryTextQuery("back fill"))
            #expect(try await deliveries.search(DeliverySearch(text: backFill)).deliveries.map(\.reference) == ["BF-2", "BF-0"])
            #expect(try await deliveries.search(DeliverySearch(flag: .clockAhead)).deliveries.map(\.reference) == ["BF-2"])
            let indexes = try await database.query("""
                SELECT count(*) FROM pg_indexes WHERE indexname IN ('proofs_signer_name_trgm', 'proofs_flags')
                """).decode(Int.self, row: 0, column: 0)
            #expect(indexes == 0)
        }
    }
}

/// Deliveries and their proofs for the search tests, written through the repositories.
private struct SearchFixture {
    let database: PostgresClient
    let deliveries: DeliveryRepository
    let proofs: ProofRepository
    /// The courier key the proofs are uploaded by.
    let key: UUID

    init(_ database: PostgresClient) async throws {
        self.database = database
        deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
        proofs = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
        key = try await APIKeyRepository(database: database).create(name: "courier", role: .courier).key.id
    }

    /// A delivery and, with a signer, its proof carrying `flags`.
    func deliver(_ reference: String, recipient: String = "R", address: String = "A", signer: String?, flags: [ProofFlag] = [.noLocation]) async throws {
        _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: recipient, address: address, destination: nil), by: nil)
        guard let signer else { return }
        var proof = NewProof.sample(uploadedBy: key, signer: signer)
        proof.assessment.flags = flags
        try await proofs.record(proof, reference: reference)
    }

    /// A copy of a stored proof written straight to `proofs` for `reference`, with the signer and
    /// flags given, as a role with INSERT on proofs could write one behind the service's back.
    func insertStrayProof(for reference: String, signedAs signer: String, flags: String) async throws {
        try await database.query("""
            INSERT INTO proofs SELECT (json_populate_record(p, json_build_object('id', gen_random_uuid(), 'delivery_id',
                (SELECT id FROM deliveries WHERE reference = \(reference)), 'signer_name', \(signer)::text, 'flags', \(flags)::text))).*
            FROM proofs p LIMIT 1
            """)
    }
}
