import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// An export reads its period page by page. Statistics taken before the newest proofs arrived tell
/// the planner that the period holds a row or two; a page query that joined first and limited last
/// then joined and sorted every proof left in the period for each page, so exporting the last hour
/// grew with the square of its length (a 1 GB hour: 155 s). The page is now chosen from `proofs` alone.
@Suite("Export page plan", .needsDatabase)
struct ExportPagePlanTests {
    /// A delivery and an uploaded proof for each of `references`, in order; `after(i)` runs once
    /// proof `i` is stored.
    static func recordProofs(_ references: [String], in database: PostgresClient,
                             after: (Int) async throws -> Void = { _ in }) async throws {
        let key = try await ProofBatcherTests.prepare(references, in: database)
        let repository = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
        for (index, reference) in references.enumerated() {
            try await repository.record(ProofBatcherTests.proof(uploadedBy: key, signer: "Signer \(reference)"), reference: reference)
            try await after(index)
        }
    }

    /// The actual rows of each node of a JSON plan (`EXPLAIN ANALYZE`) that reads a `proofs` partition.
    static func proofScans(_ plan: String) -> [Int] {
        DeliverySearchTests.nodes(plan).filter { $0.relation?.hasPrefix("proofs") == true }.compactMap(\.rows)
    }

    @Test("a page of fresh proofs, under statistics from before them, reads the page and no more")
    func pageStopsAtItsLimit() async throws {
        try await ScratchDatabase.with(prefix: "export_page") { scratch, database in
            var start = Date()
            try await Self.recordProofs((0..<300).map { "E-\($0)" }, in: database) { index in
                if index == 0 {
                    // Older history, copied from the first proof as the owner, and statistics that
                    // know it, as after the last autovacuum before a busy hour; the period exported
                    // is that hour.
                    try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                        _ = try await owner.query("""
                            INSERT INTO deliveries (reference, recipient_name, address) SELECT 'OLD-' || g, 'R', 'A' FROM generate_series(1, 20000) g
                            """)
                        _ = try await owner.query("""
                            INSERT INTO proofs SELECT (json_populate_record(p, json_build_object('id', gen_random_uuid(), 'delivery_id', d.id,
                                'received_at', p.received_at - interval '10 minutes' + d.seq * interval '1 microsecond'))).*
                            FROM proofs p CROSS JOIN deliveries d WHERE d.reference LIKE 'OLD-%'
                            """)
                        _ = try await owner.query("ANALYZE")
                    }
                    try await Task.sleep(for: .milliseconds(5))
                    start = Date()
                }
            }
            let first = try await database.query("SELECT received_at, id FROM proofs WHERE received_at >= \(start) ORDER BY received_at, id LIMIT 1").rows[0]
            let after: (AuditTimestamp, UUID) = (try first.decode("received_at"), try first.decode("id"))
            var filter = SQLFilter()
            filter.add("p.received_at >= \(start)")
            filter.add("p.received_at < \(Date().addingTimeInterval(3600))")
            filter.add("p.received_at >= \(after.0) AND (p.received_at, p.id) > (\(after.0), \(after.1))")
            let limit = 8
            // Hash joins, as the planner picks when it expects a row or two (on 1.3 M proofs it did,
            // for every page of a fresh hour): joined before the limit, every proof left in the
            // period is read and hashed; chosen first, the page alone is.
            let result = try await database.withTransaction { session in
                try await session.query("SET LOCAL enable_nestloop = off")
                try await session.query("SET LOCAL enable_mergejoin = off")
                return try await session.query("EXPLAIN (ANALYZE, FORMAT JSON) \(ProofExportReader.page(filter, limit: limit))")
            }
            let plan = try result.decode(String.self, row: 0, column: 0)
            let scans = Self.proofScans(plan)
            #expect(!scans.isEmpty, "\(plan)")
            #expect(scans.allSatisfy { $0 <= limit }, "each scan of proofs reads the page and stops: \(scans) \(plan)")
            // And the page is the next eight proofs, in order.
            let page = try await database.query(ProofExportReader.page(filter, limit: limit)).rows.map { try $0.decode(UUID.self, "id") }
            let expected = try await database.query("SELECT id FROM proofs WHERE received_at > \(after.0) ORDER BY received_at, id LIMIT \(limit)").rows
                .map { try $0.decode(UUID.self, "id") }
            #expect(page == expected)
        }
    }

    @Test("a proof whose delivery row is gone (foreign keys switched off) fails the export instead of ending it early")
    func missingDeliveryFailsTheExport() async throws {
        try await ScratchDatabase.with(prefix: "export_orphan") { scratch, database in
            try await Self.recordProofs((0..<6).map { "O-\($0)" }, in: database)
            try await scratch.asSuperuser { admin in
                try await admin.withConnection { session in
                    try await session.execute("SET session_replication_role = replica")
                    try await session.execute("DELETE FROM deliveries WHERE reference = 'O-1'")
                    try await session.execute("SET session_replication_role = DEFAULT")
                }
            }
            var read = 0
            await #expect(throws: (any Error).self, "an inner join would have read five proofs and stopped") {
                try await ProofExportReader(database: database, pageSize: 2).read(since: nil, until: nil, start: { _ in },
                                                                                   each: { read += $0.count })
            }
            #expect(read <= 1, "the page holding the orphan fails as a whole")
        }
    }

    /// The reader fetches the next page while `each` handles the current one: every proof must
    /// still come once, in `(received_at, id)` order, with its event, whatever the page size; and a
    /// failing `each` must end the read (the page being fetched is awaited, not leaked).
    @Test("pages fetched ahead give every proof once, in order, with its event; a failing each ends the read", arguments: [1, 2, 3, 7])
    func pagesAhead(pageSize: Int) async throws {
        try await ScratchDatabase.with(prefix: "export_ahead") { _, database in
            try await Self.recordProofs((0..<7).map { "A-\($0)" }, in: database)
            let expected = try await database.query("SELECT id FROM proofs ORDER BY received_at, id").rows.map { try $0.decode(UUID.self, "id") }
            var seen: [UUID] = []
            var pages = 0
            try await ProofExportReader(database: database, pageSize: pageSize).read(since: nil, until: nil, start: { snapshot in
                #expect(snapshot.proofCount == 7)
            }, each: { proofs in
                pages += 1
                #expect(proofs.count <= pageSize)
                #expect(proofs.allSatisfy { $0.event?.action == "proof_recorded" })
                seen += proofs.map(\.metadata.id)
            })
            #expect(seen == expected)
            #expect(pages == (7 + pageSize - 1) / pageSize)

            struct Stop: Error {}
            var handed = 0
            await #expect(throws: Stop.self) {
                try await ProofExportReader(database: database, pageSize: pageSize).read(since: nil, until: nil, start: { _ in }, each: { _ in
                    handed += 1
                    if handed == min(2, pages) { throw Stop() }
                })
            }
            #expect(handed == min(2, pages))
        }
    }
}
