import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Monthly partitioning of `proofs` (migration 0008) and `PartitionMaintenance`, on the real database.
@Suite("Partitioned proofs", .needsDatabase)
struct PartitionedProofsTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The first instant (UTC) of the month `offset` months from the current one, plus `days` and `seconds`.
    static func month(_ offset: Int, days: Int = 0, seconds: Int = 0) -> Date {
        let start = utc.date(from: utc.dateComponents([.year, .month], from: Date()))!
        return utc.date(byAdding: DateComponents(month: offset, day: days, second: seconds), to: start)!
    }

    /// `<table>_pYYYYMM` for the month holding `date`.
    static func partition(_ table: String = "proofs", for date: Date) -> String {
        let parts = utc.dateComponents([.year, .month], from: date)
        return table + "_p" + String(format: "%04d%02d", parts.year!, parts.month!)
    }

    static func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    static func proof(receivedAt: Date, uploadedBy: UUID) -> NewProof {
        NewProof.sample(uploadedBy: uploadedBy, receivedAt: receivedAt, body: randomBytes(600), ink: randomBytes(400), png: randomBytes(900))
    }

    /// Rows in proofs' default partition, asked as the owner: the runtime role reaches proofs only through the parent.
    static func defaultRows(_ scratch: ScratchDatabase) async throws -> Int {
        try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
            try await count("SELECT count(*) FROM proofs_default", in: owner)
        }
    }

    static func count(_ sql: String, _ parameters: [any PostgresBindable] = [], in database: PostgresClient) async throws -> Int {
        try await database.query(sql, parameters).decode(Int.self, row: 0, column: 0)
    }

    static func partitions(of table: String, in database: PostgresClient) async throws -> [String] {
        try await database.query("""
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1
            """, [table]).rows.map { try $0.decode(String.self, 0) }
    }

    @Test("0008 on a database holding proofs: every row, byte and hash kept, each in its month's partition, settings and triggers on every partition")
    func migratesExistingProofs() async throws {
        try await ScratchDatabase.with(prefix: "part_migr", migratedThrough: 7) { _, database, all in
            // Raw SQL throughout: today's repositories write audit events in the shape of later migrations.
            let keyID = try await database.query("""
                INSERT INTO api_keys (name, role, token_sha256) VALUES ('legacy', 'courier', sha256('legacy')) RETURNING id
                """).decode(UUID.self, row: 0, column: 0)
            // Proofs over five months, stored the way 0002-0007 stored them (one with a delivered_at off by a
            // second, one whose delivery was left pending, as rows written by hand can be).
            var stored: [(reference: String, proof: NewProof)] = []
            for (index, offset) in [-4, -3, -3, -1, 0, 0].enumerated() {
                let reference = "OLD-\(index)"
                let proof = Self.proof(receivedAt: Self.month(offset, days: 3 + index, seconds: 17), uploadedBy: keyID)
                let deliveredAt: Date? = index == 2 ? proof.body.receivedAt.addingTimeInterval(1) : index == 3 ? nil : proof.body.receivedAt
                try await database.query("""
                    WITH d AS (INSERT INTO deliveries (reference, recipient_name, address, status, delivered_at)
                               VALUES ($1, 'R', 'A', CASE WHEN $2::timestamptz IS NULL THEN 'pending' ELSE 'delivered' END, $2)
                               RETURNING id)
                    INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
                        geofence_radius_m, flags, body, body_content_type, body_sha256, ink_format, ink, point_count, stroke_count,
                        png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by)
                    SELECT $3, d.id, 'Ada', $4, 0, 't', $4, 200, '{}', $5, 'application/json', $6, 'ink', $7, 1, 1, $8, $9, 10, 10,
                        '{"scale":1}', 'v', $10
                    FROM d
                    """, [reference, deliveredAt, proof.id, proof.body.receivedAt, PostgresBytes(proof.body.bytes), PostgresBytes(proof.body.sha256),
                          PostgresBytes(proof.rendering.ink), PostgresBytes(proof.rendering.png), PostgresBytes(proof.rendering.pngSHA256), keyID])
                stored.append((reference, proof))
            }

            #expect(try await MigrationRunner(client: database).migrate(all).contains(8))

            #expect(try await Self.count("SELECT count(*) FROM proofs", in: database) == stored.count)
            for (reference, proof) in stored {
                let row = try #require(try await database.query("""
                    SELECT tableoid::regclass::text, body, ink, png, body_sha256, png_sha256, received_at FROM proofs WHERE id = $1
                    """, [proof.id]).first)
                #expect(try row.decode(String.self, 0) == Self.partition(for: proof.body.receivedAt))
                #expect(try row.decode([UInt8].self, 1) == proof.body.bytes)
                #expect(try row.decode([UInt8].self, 2) == proof.rendering.ink)
                #expect(try row.decode([UInt8].self, 3) == proof.rendering.png)
                #expect(try row.decode([UInt8].self, 4) == SHA256.hash(proof.body.bytes))
                #expect(try row.decode([UInt8].self, 5) == SHA256.hash(proof.rendering.png))
                // Found by reference through the partition-pruning join (the two odd deliveries were realigned).
                #expect(try await ProofRepository(database: database, dataKeys: TestDataKeys.provider).metadata(reference: reference)?.id == proof.id)
                let delivery = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).find(reference: reference)
                #expect(delivery?.status == .delivered && delivery?.deliveredAt == proof.body.receivedAt)
            }

            // A partition for every month from the oldest proof to three months ahead, and the default, all with the trigger.
            let names = try await Self.partitions(of: "proofs", in: database)
            let expected = (-4...3).map { Self.partition(for: Self.month($0)) } + ["proofs_default"]
            #expect(names == expected.sorted())
            #expect(try await Self.count("SELECT count(*) FROM proofs_default", in: database) == 0)
            #expect(try await Self.count("""
                SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'proofs'::regclass
                AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = i.inhrelid AND t.tgname = 'proofs_no_truncate')
                """, in: database) == 0)
            // lz4 for body and ink, STORAGE EXTERNAL for png, on the parent and on every partition.
            let settings = try await database.query("""
                SELECT c.relname, a.attname, a.attstorage::text, a.attcompression::text
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                WHERE a.attname IN ('body', 'ink', 'png')
                  AND (c.oid = 'proofs'::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'proofs'::regclass))
                """).rows
            #expect(settings.count == 3 * (expected.count + 1))
            for row in settings {
                let table = try row.decode(String.self, 0), column = try row.decode(String.self, 1)
                if column == "png" {
                    #expect(try row.decode(String.self, 2) == "e", "png storage in \(table)")
                } else {
                    #expect(try row.decode(String.self, 3) == "l", "\(column) compression in \(table)")
                }
            }
            // The copied values really are lz4-compressed where PostgreSQL compressed them at all.
            #expect(try await Self.count("""
                SELECT count(*) FROM proofs WHERE pg_column_compression(body) IS DISTINCT FROM 'lz4' AND pg_column_compression(body) IS NOT NULL
                """, in: database) == 0)
            #expect(try await Self.count("SELECT count(*) FROM pg_class WHERE relname = 'proofs_before_0008'", in: database) == 0)

            // Immutable: no TRUNCATE of a partition, no DELETE or UPDATE through it.
            let oldest = Self.partition(for: Self.month(-4))
            await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE \(unescaped: oldest)") }
            await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE proofs_default") }
            await #expect(throws: PostgresError.self) { try await database.query("DELETE FROM \(unescaped: oldest)") }
            await #expect(throws: PostgresError.self) { try await database.query("UPDATE proofs SET signer_name = 'x'") }
            #expect(try await Self.count("SELECT count(*) FROM proofs", in: database) == stored.count)
        }
    }

    @Test("a proof lands in the partition of its received_at month; the default partition stays empty")
    func proofLandsInItsMonth() async throws {
        try await ScratchDatabase.with(prefix: "part_month") { scratch, database in
            let (key, _) = try await APIKeyRepository(database: database).create(name: "c", role: .courier)
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider), proofs = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
            for (index, receivedAt) in [Self.month(0, days: 1), Self.month(1), Self.month(2, days: 27, seconds: 86_399), Date()].enumerated() {
                let reference = "M-\(index)"
                _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: "R", address: "A", destination: nil), by: nil)
                let proof = Self.proof(receivedAt: receivedAt, uploadedBy: key.id)
                try await proofs.record(proof, reference: reference)
                let table = try await database.query("SELECT tableoid::regclass::text FROM proofs WHERE id = $1", [proof.id])
                    .decode(String.self, row: 0, column: 0)
                #expect(table == Self.partition(for: receivedAt))
                #expect(try await proofs.metadata(reference: reference)?.id == proof.id)
                #expect(try await deliveries.find(reference: reference)?.proof?.id == proof.id)
                #expect(try await proofs.png(reference: reference)?.bytes == proof.rendering.png)
            }
            #expect(try await Self.defaultRows(scratch) == 0)
            #expect(try await Self.count("SELECT count(*) FROM proofs", in: database) == 4)
        }
    }

    @Test("twenty concurrent uploads for one delivery, received in different months: exactly one proof is stored")
    func racingUploadsStoreOneProof() async throws {
        try await ScratchDatabase.with(prefix: "part_race", poolSize: 20) { _, database in
            let (key, _) = try await APIKeyRepository(database: database).create(name: "c", role: .courier)
            _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(NewDelivery(reference: "RACE", recipientName: "R", address: "A", destination: nil), by: nil)
            let proofs = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
            // Different months, so different partitions: no per-partition index could be the arbiter.
            let attempts = (0..<20).map { Self.proof(receivedAt: Self.month($0 % 3, days: 2, seconds: $0), uploadedBy: key.id) }
            let results = await withTaskGroup(of: (UUID, Result<Void, any Error>).self) { group in
                for proof in attempts {
                    group.addTask {
                        do { return (proof.id, .success(try await proofs.record(proof, reference: "RACE"))) } catch { return (proof.id, .failure(error)) }
                    }
                }
                var results: [(UUID, Result<Void, any Error>)] = []
                for await result in group { results.append(result) }
                return results
            }
            let winners = results.filter { if case .success = $0.1 { return true } else { return false } }.map(\.0)
            #expect(winners.count == 1)
            for case (_, .failure(let error)) in results {
                guard case .proofAlreadyRecorded? = error as? ProofStoreError else {
                    Issue.record("a losing upload failed with \(error), not proofAlreadyRecorded")
                    continue
                }
            }
            let winner = try #require(winners.first)
            let stored = try await database.query("SELECT p.id FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = 'RACE'")
            #expect(try stored.rows.map { try $0.decode(UUID.self, 0) } == [winner])
            let winnerProof = try #require(attempts.first { $0.id == winner })
            let deliveredAt = try await database.query("SELECT delivered_at FROM deliveries WHERE reference = 'RACE'")
                .decode(Date.self, row: 0, column: 0)
            #expect(abs(deliveredAt.timeIntervalSince(winnerProof.body.receivedAt)) < 0.000_002)
            #expect(try await proofs.metadata(reference: "RACE")?.id == winner)
            #expect(try await Self.count("""
                SELECT count(*) FROM audit_events WHERE action = 'proof_recorded' AND subject = 'delivery:RACE'
                """, in: database) == 1)
        }
    }

    @Test("maintenance creates the missing months once, is idempotent, and concurrent runs create each partition once")
    func maintenanceIsIdempotentAndConcurrent() async throws {
        try await ScratchDatabase.with(prefix: "part_maint") { scratch, database in
            #expect(try await PartitionMaintenance(database: database).partitionedTables().contains("proofs"))
            // The migration already made the current month and three ahead. (Other partitioned tables,
            // audit_events after 0009, get their months too: only those of proofs are checked here.)
            #expect(try await PartitionMaintenance(database: database).run().filter { $0.table == "proofs" } == [])
            let five = try await PartitionMaintenance(database: database, monthsAhead: 5).run().filter { $0.table == "proofs" }
            #expect(five.map(\.partition) == [Self.partition(for: Self.month(4)), Self.partition(for: Self.month(5))])
            #expect(five.allSatisfy { $0.error == nil })
            #expect(five.first?.rangeStart == Self.month(4) && five.first?.rangeEnd == Self.month(5))
            #expect(try await PartitionMaintenance(database: database, monthsAhead: 5).run() == [])  // every table, now

            // Eight replicas at once, each on its own connection.
            let clients = (0..<8).map { _ in scratch.client(poolSize: 1) }
            let outcomes = try await withThrowingTaskGroup(of: [PartitionMaintenance.Outcome].self) { group in
                for client in clients { group.addTask { try await PartitionMaintenance(database: client, monthsAhead: 12).run() } }
                var all: [PartitionMaintenance.Outcome] = []
                for try await outcome in group { all += outcome }
                return all
            }
            for client in clients { await client.shutdown() }
            #expect(outcomes.allSatisfy { $0.error == nil })
            // Each partition created by exactly one of the eight runs.
            #expect(outcomes.filter { $0.table == "proofs" }.map(\.partition).sorted() == (6...12).map { Self.partition(for: Self.month($0)) })
            #expect(Set(outcomes.map(\.partition)).count == outcomes.count)
            let names = try await Self.partitions(of: "proofs", in: database)
            #expect(names.contains(Self.partition(for: Self.month(12))))
            #expect(try await Self.count("""
                SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'proofs'::regclass
                AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = i.inhrelid AND t.tgname = 'proofs_no_truncate')
                """, in: database) == 0)
            await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE \(unescaped: Self.partition(for: Self.month(12)))") }
        }
    }

    @Test("the periodic maintenance of a serving process recreates a missing month, and stops when cancelled")
    func periodicMaintenance() async throws {
        try await ScratchDatabase.with(prefix: "part_loop") { scratch, database in
            let month = Self.partition(for: Self.month(3))
            // Only the owner may drop a partition; the serving process (the runtime role) recreates it.
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 1)) { owner in
                try await owner.query("DROP TABLE \(unescaped: month)")
            }
            let exists = "SELECT count(*) FROM pg_class WHERE relname = '\(month)'"
            let loop = Task { await PartitionMaintenance(database: database).runPeriodically(every: .milliseconds(20)) }
            var polls = 0
            while try await Self.count(exists, in: database) == 0 && polls < 3_000 {
                polls += 1
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(try await Self.count(exists, in: database) == 1)
            loop.cancel()
            await loop.value  // returns: the loop ends on cancellation
            #expect(try await Self.defaultRows(scratch) == 0)
        }
    }

    @Test("the SQL function works for any table range-partitioned on a timestamptz, and reports a month it cannot create")
    func functionIsGeneric() async throws {
        // The owner's function on tables of the test's own: the owner makes them and calls it (the
        // runtime role may do neither).
        try await ScratchDatabase.with(prefix: "part_generic") { scratch, _ in
            try await PostgresClient.withClient(.forTests(url: scratch.ownerURL, poolSize: 2)) { database in
                try await database.withConnection { session in
                    try await session.executeScript("""
                        CREATE TABLE ledger (seq bigint NOT NULL, occurred_at timestamptz NOT NULL, note text,
                                             PRIMARY KEY (seq, occurred_at)) PARTITION BY RANGE (occurred_at);
                        CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();
                        CREATE TRIGGER ledger_immutable BEFORE UPDATE OR DELETE ON ledger FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
                        CREATE TABLE ledger_default PARTITION OF ledger DEFAULT;
                        CREATE TABLE by_number (n int NOT NULL) PARTITION BY RANGE (n);
                        """)
                }
                // A row for two months ahead already sits in the default partition: that month cannot be created.
                try await database.query("INSERT INTO ledger VALUES (1, $1, 'early')", [Self.month(2, days: 3)])
                let rows = try await database.query("""
                    SELECT partition_name, error FROM countersign_ensure_monthly_partitions('ledger', 3, $1)
                    """, [Self.month(-2, days: 9)]).rows
                let outcomes = try rows.map { (try $0.decode(String.self, 0), try $0.decode(String?.self, 1)) }
                #expect(outcomes.map(\.0) == (-2...3).map { Self.partition("ledger", for: Self.month($0)) })
                for (name, error) in outcomes {
                    if name == Self.partition("ledger", for: Self.month(2)) {
                        #expect(error?.contains("default partition") == true, "\(error ?? "no error")")
                    } else {
                        #expect(error == nil, "\(name): \(error ?? "")")
                    }
                }
                let made = try await Self.partitions(of: "ledger", in: database)
                #expect(!made.contains(Self.partition("ledger", for: Self.month(2))))
                #expect(made.count == 6)  // five months + default
                // Row triggers are inherited, the TRUNCATE trigger was copied.
                let current = Self.partition("ledger", for: Date())
                try await database.query("INSERT INTO ledger VALUES (2, now(), 'now')")
                #expect(try await Self.count("SELECT count(*) FROM \(current)", in: database) == 1)
                await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE \(unescaped: current)") }
                await #expect(throws: PostgresError.self) { try await database.query("DELETE FROM \(unescaped: current)") }
                // Not a timestamptz range key.
                await #expect(throws: PostgresError.self) {
                    try await database.query("SELECT * FROM countersign_ensure_monthly_partitions('by_number', 1)")
                }
                // maintenance only looks at proofs and audit_events: ledger is not touched by it.
                #expect(try await PartitionMaintenance(database: database).partitionedTables().allSatisfy { ["proofs", "audit_events"].contains($0) })
            }
        }
    }
}
