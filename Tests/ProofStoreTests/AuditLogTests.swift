import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

@Suite("Audit encoding")
struct AuditEncodingTests {
    @Test("canonical bytes follow docs/audit.md: tag, seq, microseconds, then null or length-prefixed UTF-8 fields")
    func canonicalBytes() {
        let event = AuditEvent(seq: 2, occurredAtMicros: 1_700_000_000_123_456, actorKeyID: UUID(uuidString: "00000000-0000-0000-0000-0000000000AB"),
                               actorRole: "admin", action: "key_revoked", subject: "key:x", requestID: nil, clientAddress: "::1",
                               userAgent: nil, detailsJSON: "{}", prevHash: [UInt8](repeating: 7, count: 32), hash: [])
        func text(_ value: String) -> [UInt8] {
            let bytes = Array(value.utf8)
            return [1, 0, 0, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        var expected = text("countersign.audit/v1")
        expected += [0, 0, 0, 0, 0, 0, 0, 2]
        expected += withUnsafeBytes(of: Int64(1_700_000_000_123_456).bigEndian) { Array($0) }
        expected += text("00000000-0000-0000-0000-0000000000ab") + text("admin") + text("key_revoked") + text("key:x")
        expected += [0] + text("::1") + [0] + text("{}")
        #expect(event.canonicalBytes == expected)
        #expect(event.recomputedHash == SHA256.hash(event.prevHash + expected))
        #expect(AuditEvent.genesisHash == [UInt8](repeating: 0, count: 32))
    }
}

@Suite("Audit log store", .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason)))
struct AuditLogTests {
    static func actions(_ database: PostgresClient) async throws -> [String] {
        try await database.query("SELECT action FROM audit_events ORDER BY seq").rows.map { try $0.decode(String.self, 0) }
    }

    @Test("changes append exactly one event each, in their transaction; repeats and failures append none")
    func changesAppend() async throws {
        try await ScratchDatabase.with(prefix: "audit") { _, database in
            let keys = APIKeyRepository(database: database)
            let (key, _) = try await keys.create(name: "k", role: .dispatcher)
            #expect(try await keys.revoke(id: key.id))
            #expect(try await keys.revoke(id: key.id), "still true: the key exists")
            #expect(try await keys.revoke(id: UUID()) == false)
            let deliveries = DeliveryRepository(database: database)
            let draft = NewDelivery(reference: "A-1", recipientName: "R", address: "X", destination: nil)
            _ = try await deliveries.create(draft, by: key.actor)
            _ = try await deliveries.create(draft, by: key.actor)
            var other = draft
            other.address = "Y"
            _ = try await deliveries.create(other, by: key.actor)
            #expect(try await Self.actions(database) == ["key_created", "key_revoked", "delivery_created"])

            // A transaction that rolls back takes its event (and its seq) with it.
            await #expect(throws: PostgresError.self) {
                try await database.withTransaction { session in
                    try await AuditLog.append(.deliveryCreated, subject: "delivery:ghost", origin: .system, in: session)
                    try await session.execute("SELECT 1/0")
                }
            }
            let event = try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:A-1", origin: .system)
            #expect(event.seq == 4)
            let page = try await AuditLog(database: database).events(AuditQuery(limit: 10))
            #expect(page.events.map(\.seq) == [1, 2, 3, 4])
            #expect(page.events[0].actorRole == "cli" && page.events[0].actorKeyID == nil)
            #expect(page.events[2].actorKeyID == key.id && page.events[2].actorRole == "dispatcher")
            #expect(page.events[0].prevHash == AuditEvent.genesisHash)
            #expect(zip(page.events.dropFirst(), page.events).allSatisfy { $0.prevHash == $1.hash })
            #expect(page.events.allSatisfy { $0.recomputedHash == $0.hash })
        }
    }

    @Test("200 concurrent read events are group-committed: each caller gets its own committed event, the chain stays whole")
    func groupCommit() async throws {
        try await ScratchDatabase.with(prefix: "audit", poolSize: 4) { _, database in
            let log = AuditLog(database: database)
            let events = try await withThrowingTaskGroup(of: AuditEvent.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await log.append(.proofPNGRead, subject: "delivery:R-\(index)", details: ["n": String(index)],
                                             origin: AuditOrigin(actor: nil, requestID: "req-\(index)"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(events.map(\.seq)) == Set(1...200))
            for event in events {
                #expect(event.subject == "delivery:R-\(event.details["n"] ?? "")")
                #expect(event.requestID == "req-\(event.details["n"] ?? "")")
            }
            let stored = try await AuditLog(database: database).events(AuditQuery(limit: 500)).events
            #expect(stored == events.sorted { $0.seq < $1.seq })
            #expect(try await AuditVerifier(database: database).verify() == .ok(count: 200, headHash: stored.last!.hash))
        }
    }

    @Test("verification pages through the chain: any page size gives the same answer")
    func pagedVerification() async throws {
        try await ScratchDatabase.with(prefix: "auditpg") { _, database in
            let log = AuditLog(database: database)
            #expect(try await AuditVerifier(database: database).verify() == .ok(count: 0, headHash: AuditEvent.genesisHash))
            var last: AuditEvent?
            for index in 0..<23 { last = try await log.append(.proofSVGRead, subject: "delivery:R-\(index)", origin: .system) }
            for size in [1, 5, 22, 23, 1_000] {
                let result = try await AuditVerifier(database: database, pageSize: size).verify()
                #expect(result == .ok(count: 23, headHash: last!.hash), "page size \(size)")
            }
            // Sub-microsecond times cannot drift: the stored time is the hashed time.
            let stored = try await log.events(AuditQuery(limit: 1, afterSeq: 22)).events[0]
            #expect(stored == last)
        }
    }

    @Test("proofs stored before the audit log get a proof_recorded event from migration 0004, and verify")
    func backfill() async throws {
        let scratch = try await ScratchDatabase.create(prefix: "auditbf", migrate: false)
        let database = scratch.client(poolSize: 2)
        do {
            let migrations = try Migration.load(from: ScratchDatabase.migrationsDirectory)
            let runner = MigrationRunner(client: database)
            _ = try await runner.migrate(migrations.filter { $0.version <= 2 })
            let body = Array(#"{"ink":[]}"#.utf8), png = Array("not really a png".utf8)
            for (index, reference) in ["OLD-2", "OLD-1"].enumerated() {
                try await database.query("""
                    WITH k AS (INSERT INTO api_keys (name, role, token_sha256) VALUES ('old', 'courier', $1) RETURNING id),
                         d AS (INSERT INTO deliveries (reference, recipient_name, address, created_by)
                               SELECT $2, 'R', 'A', k.id FROM k RETURNING id)
                    INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
                        geofence_radius_m, body, body_content_type, body_sha256, ink_format, ink, point_count, stroke_count, png, png_sha256,
                        png_width, png_height, render_options, algorithm_version, uploaded_by)
                    SELECT gen_random_uuid(), d.id, 'S', now(), 0, 'x', now() - $3 * interval '1 minute', 100, $4, 'application/json', $5,
                        'ink', $4, 0, 0, $6, $7, 1, 1, '{}', 'v', k.id FROM d, k
                    """, [PostgresBytes(SHA256.hash(Array(reference.utf8))), reference, index, PostgresBytes(body),
                          PostgresBytes(SHA256.hash(body)), PostgresBytes(png), PostgresBytes(SHA256.hash(png))])
            }
            #expect(try await runner.migrate(migrations) == migrations.map(\.version).filter { $0 > 2 })
            let result = try await AuditVerifier(database: database).verify()
            guard case .ok(let count, _) = result else { Issue.record("not ok: \(result)"); throw CancellationError() }
            #expect(count == 2)
            let events = try await AuditLog(database: database).events(AuditQuery(limit: 10)).events
            #expect(events.map(\.subject) == ["delivery:OLD-1", "delivery:OLD-2"], "oldest proof first")
            #expect(events.allSatisfy { $0.actorRole == "system" && $0.details["source"] == "migration_0004" })
            // The backfilled events chain on like any other, and their proofs are re-hashed.
            let next = try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:OLD-1", origin: .system)
            #expect(next.seq == 3)
            #expect(try await AuditVerifier(database: database).verify() == .ok(count: 3, headHash: next.hash))
            await database.shutdown()
            await scratch.drop()
        } catch {
            await database.shutdown()
            await scratch.drop()
            throw error
        }
    }
}
