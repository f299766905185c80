import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

@Suite("Audit encoding")
struct AuditEncodingTests {
    static func text(_ value: String) -> [UInt8] {
        let bytes = Array(value.utf8)
        return [1, 0, 0, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    @Test("v1 canonical bytes follow docs/audit.md: tag, seq, microseconds, then null or length-prefixed UTF-8 fields")
    func canonicalBytesV1() {
        let event = AuditEvent(seq: 2, occurredAtMicros: 1_700_000_000_123_456, actorKeyID: UUID(uuidString: "00000000-0000-0000-0000-0000000000AB"),
                               actorRole: "admin", action: "key_revoked", subject: "key:x", requestID: nil, clientAddress: "::1",
                               userAgent: nil, detailsJSON: "{}", prevHash: [UInt8](repeating: 7, count: 32), hash: [],
                               chain: 0, encoding: .v1)
        var expected = Self.text("countersign.audit/v1")
        expected += [0, 0, 0, 0, 0, 0, 0, 2]
        expected += withUnsafeBytes(of: Int64(1_700_000_000_123_456).bigEndian) { Array($0) }
        expected += Self.text("00000000-0000-0000-0000-0000000000ab") + Self.text("admin") + Self.text("key_revoked") + Self.text("key:x")
        expected += [0] + Self.text("::1") + [0] + Self.text("{}")
        #expect(event.canonicalBytes == expected)
        #expect(event.recomputedHash == SHA256.hash(event.prevHash + expected))
        #expect(AuditEvent.genesisHash == [UInt8](repeating: 0, count: 32))
    }

    @Test("v2 canonical bytes add the chain after the tag, so the same event on another chain hashes differently")
    func canonicalBytesV2() {
        var event = AuditEvent(seq: 300, occurredAtMicros: 1_700_000_000_000_001, actorKeyID: nil, actorRole: "system",
                               action: "proof_png_read", subject: "delivery:R", requestID: "r", clientAddress: nil, userAgent: "ua",
                               detailsJSON: #"{"a":"b"}"#, prevHash: AuditEvent.genesisHash, hash: [], chain: 11, encoding: .v2)
        var expected = Self.text("countersign.audit/v2") + [0, 11]
        expected += withUnsafeBytes(of: Int64(300).bigEndian) { Array($0) }
        expected += withUnsafeBytes(of: Int64(1_700_000_000_000_001).bigEndian) { Array($0) }
        expected += [0] + Self.text("system") + Self.text("proof_png_read") + Self.text("delivery:R") + Self.text("r") + [0]
        expected += Self.text("ua") + Self.text(#"{"a":"b"}"#)
        #expect(event.canonicalBytes == expected)
        let hash = event.recomputedHash
        event.chain = 12
        #expect(event.recomputedHash != hash)
    }

    @Test("a subject's chain is the first two bytes of SHA-256(subject) mod 16: stable, and spread over all chains")
    func chainOfSubject() {
        for subject in ["delivery:REF-1", "key:00000000-0000-0000-0000-000000000001", "export:/"] {
            let digest = SHA256.hash(Array(subject.utf8))
            #expect(AuditLog.chain(for: subject) == Int16((Int(digest[0]) * 256 + Int(digest[1])) % 16))
        }
        #expect(AuditLog.chain(for: "delivery:REF-1") == 10, "the value docs/audit.md quotes")
        let used = Set((0..<400).map { AuditLog.chain(for: "delivery:R-\($0)") })
        #expect(used == Set(0..<16))
    }

    @Test("version 2 checkpoints sign every head; changing any head, the time or the key breaks the signature")
    func checkpointV2() throws {
        let key = try Ed25519PrivateKey.generate()
        let heads = (0..<16).map { AuditChainHead(chain: Int16($0), seq: Int64($0 * 3), hash: [UInt8](repeating: UInt8($0), count: 32)) }
        let checkpoint = try AuditCheckpoint.sign(heads: heads, key: key)
        #expect(checkpoint.version == 2 && checkpoint.seq == 45 && checkpoint.hasValidSignature)
        #expect(Array(checkpoint.message.prefix(30)) == Self.text("countersign.checkpoint/v2"))
        #expect(checkpoint.message.count == 30 + 8 + 4 + 16 * 42)
        #expect(AuditChainHead.decode(AuditChainHead.encode(heads)) == heads)
        var forged = checkpoint
        forged.heads[7].seq += 1
        #expect(!forged.hasValidSignature)
        forged = checkpoint
        forged.heads[15].hash[0] ^= 1
        #expect(!forged.hasValidSignature)
        forged = checkpoint
        forged.signedAtMicros += 1
        #expect(!forged.hasValidSignature)
        let legacy = try AuditCheckpoint.signLegacy(seq: 5, headHash: heads[5].hash, key: key)
        #expect(legacy.version == 1 && legacy.hasValidSignature)
        #expect(legacy.anchoredHeads == [AuditChainHead(chain: 0, seq: 5, hash: heads[5].hash)])
    }
}

@Suite("Audit log store", .needsDatabase)
struct AuditLogTests {
    static func actions(_ database: PostgresClient) async throws -> [String] {
        try await database.query("SELECT action FROM audit_events ORDER BY seq").rows.map { try $0.decode(String.self, 0) }
    }

    static func heads(_ database: PostgresClient) async throws -> [AuditChainHead] {
        try await database.withConnection { session in try await AuditCheckpointStore.heads(in: session) }
    }

    /// Every event links to the previous event of its own chain (or the genesis hash) and hashes right.
    static func expectLinked(_ events: [AuditEvent], sourceLocation: SourceLocation = #_sourceLocation) {
        var last: [Int16: [UInt8]] = [:]
        for event in events.sorted(by: { $0.seq < $1.seq }) {
            #expect(event.prevHash == last[event.chain] ?? AuditEvent.genesisHash, "seq \(event.seq)", sourceLocation: sourceLocation)
            #expect(event.recomputedHash == event.hash, sourceLocation: sourceLocation)
            #expect(event.chain == AuditLog.chain(for: event.subject), sourceLocation: sourceLocation)
            last[event.chain] = event.hash
        }
    }

    @Test("changes append exactly one event each, in their transaction; repeats and failures append none")
    func changesAppend() async throws {
        try await ScratchDatabase.with(prefix: "audit") { _, database in
            let keys = APIKeyRepository(database: database)
            let (key, _) = try await keys.create(name: "k", role: .dispatcher)
            #expect(try await keys.revoke(id: key.id))
            #expect(try await keys.revoke(id: key.id), "still true: the key exists")
            #expect(try await keys.revoke(id: UUID()) == false)
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            let draft = NewDelivery(reference: "A-1", recipientName: "R", address: "X", destination: nil)
            _ = try await deliveries.create(draft, by: key.actor)
            _ = try await deliveries.create(draft, by: key.actor)
            var other = draft
            other.address = "Y"
            _ = try await deliveries.create(other, by: key.actor)
            #expect(try await Self.actions(database) == ["key_created", "key_revoked", "delivery_created"])

            // A transaction that rolls back takes its event with it; its seq stays unused (a gap).
            await #expect(throws: PostgresError.self) {
                try await database.withTransaction { session in
                    try await AuditLog.append(.deliveryCreated, subject: "delivery:ghost", origin: .system, in: session)
                    try await session.execute("SELECT 1/0")
                }
            }
            let event = try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:A-1", origin: .system)
            #expect(event.seq == 5)
            #expect(event.chain == AuditLog.chain(for: "delivery:A-1") && event.encoding == .v2)
            let page = try await AuditLog(database: database).events(AuditQuery(limit: 10))
            #expect(page.events.map(\.seq) == [1, 2, 3, 5])
            #expect(page.events[0].actorRole == "cli" && page.events[0].actorKeyID == nil)
            #expect(page.events[2].actorKeyID == key.id && page.events[2].actorRole == "dispatcher")
            #expect(page.events[0].chain == page.events[1].chain, "both events of one key share a chain")
            #expect(page.events[1].prevHash == page.events[0].hash)
            #expect(page.events[2].chain == page.events[3].chain && page.events[3].prevHash == page.events[2].hash)
            Self.expectLinked(page.events)
            let heads = try await Self.heads(database)
            #expect(heads.count == 16)
            #expect(heads[Int(event.chain)] == AuditChainHead(chain: event.chain, seq: 5, hash: event.hash))
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() == .ok(count: 4, heads: heads))
        }
    }

    @Test("200 concurrent read events are group-committed: each caller gets its own committed event, the chains stay whole")
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
            Self.expectLinked(stored)
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() == .ok(count: 200, heads: try await Self.heads(database)))
        }
    }

    @Test("16 connections appending in their own transactions on every chain: no fork, heads agree, all verify")
    func concurrentChains() async throws {
        try await ScratchDatabase.with(prefix: "auditcc", poolSize: 16) { _, database in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for index in 0..<25 {
                            // Subjects spread over the chains; each worker also hits the chains the others use.
                            let subject = "delivery:C-\((worker * 7 + index) % 40)"
                            _ = try await database.withTransaction { session in
                                try await AuditLog.append(.proofPNGRead,
                                                          subject: subject, details: ["w": String(worker)], origin: .system, in: session)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stats = try await database.query("""
                SELECT count(*), count(DISTINCT seq), count(DISTINCT (chain, prev_hash)), count(DISTINCT chain) FROM audit_events
                """)
            #expect(try stats.decode(Int.self, row: 0, column: 0) == 400)
            #expect(try stats.decode(Int.self, row: 0, column: 1) == 400)
            #expect(try stats.decode(Int.self, row: 0, column: 2) == 400, "every event has its own predecessor in its chain: no fork")
            #expect(try stats.decode(Int.self, row: 0, column: 3) > 8)
            let events = try await AuditLog(database: database).events(AuditQuery(limit: 1_000)).events
            Self.expectLinked(events)
            let heads = try await Self.heads(database)
            for head in heads {
                let last = events.last { $0.chain == head.chain }
                #expect(head == (last.map { AuditChainHead(chain: $0.chain, seq: $0.seq, hash: $0.hash) } ?? .empty(head.chain)))
            }
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider, pageSize: 37).verify() == .ok(count: 400, heads: heads))
        }
    }

    @Test("verification pages through the chains: any page size gives the same answer")
    func pagedVerification() async throws {
        try await ScratchDatabase.with(prefix: "auditpg") { _, database in
            let log = AuditLog(database: database)
            let empty = (0..<16).map { AuditChainHead.empty(Int16($0)) }
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() == .ok(count: 0, heads: empty))
            var last: AuditEvent?
            for index in 0..<23 { last = try await log.append(.proofSVGRead, subject: "delivery:R-\(index % 5)", origin: .system) }
            let heads = try await Self.heads(database)
            for size in [1, 5, 22, 23, 1_000] {
                let result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider, pageSize: size).verify()
                #expect(result == .ok(count: 23, heads: heads), "page size \(size)")
            }
            // Sub-microsecond times cannot drift: the stored time is the hashed time.
            let stored = try await log.events(AuditQuery(limit: 1, afterSeq: 22)).events[0]
            #expect(stored == last)
        }
    }

    /// One way to tamper with the chains as a superuser, and what verification must report.
    struct Tamper: Sendable, CustomStringConvertible {
        var name: String
        /// SQL run with triggers disabled; `$C` is the busiest chain, `$S1`… its events' seqs.
        var sql: [String]
        var kind: AuditBreak.Kind
        /// Which of `$S0…` the report names (nil: not checked).
        var reportedSeq: Int?
        var description: String { name }
    }

    static let tampers: [Tamper] = [
        Tamper(name: "edit a field", sql: ["UPDATE audit_events SET subject = 'delivery:other' WHERE seq = $S1"],
               kind: .hashMismatch, reportedSeq: 1),
        Tamper(name: "edit a field and its hash", sql: ["UPDATE audit_events SET subject = 'delivery:other', hash = $H1X WHERE seq = $S1"],
               kind: .prevMismatch, reportedSeq: 2),
        Tamper(name: "delete a middle event", sql: ["DELETE FROM audit_events WHERE seq = $S1"], kind: .prevMismatch, reportedSeq: 2),
        Tamper(name: "reorder two events", sql: ["UPDATE audit_events SET seq = CASE seq WHEN $S1 THEN $S2 ELSE $S1 END WHERE seq IN ($S1, $S2)"],
               kind: .hashMismatch, reportedSeq: 1),
        Tamper(name: "move an event to another chain", sql: ["UPDATE audit_events SET chain = ($C + 1) % 16 WHERE seq = $S1"],
               kind: .hashMismatch, reportedSeq: 1),
        Tamper(name: "truncate a tail, heads left", sql: ["DELETE FROM audit_events WHERE chain = $C AND seq >= $SLAST"],
               kind: .headMismatch, reportedSeq: -2),
        Tamper(name: "truncate a tail below a checkpoint, heads rewound",
               sql: ["DELETE FROM audit_events WHERE chain = $C AND seq >= $SLAST",
                     "UPDATE audit_chains SET head_seq = $SPREV, head_hash = $HPREV WHERE chain = $C"],
               kind: .checkpointMismatch, reportedSeq: -1),
        Tamper(name: "drop a whole chain and its head row", sql: ["DELETE FROM audit_events WHERE chain = $C", "DELETE FROM audit_chains WHERE chain = $C"],
               kind: .checkpointMismatch, reportedSeq: -1),
        Tamper(name: "drop a head row only", sql: ["DELETE FROM audit_chains WHERE chain = $C"], kind: .unknownChain, reportedSeq: 0),
        Tamper(name: "duplicate an event's seq", sql: ["""
            INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_role, action, subject, details_text, prev_hash, hash)
            SELECT seq, chain, encoding, occurred_at + interval '1 microsecond', actor_role, action, subject, details_text, prev_hash, hash
            FROM audit_events WHERE seq = $S1
            """], kind: .duplicateSeq, reportedSeq: 1),
    ]

    @Test("as the superuser, every kind of tampering is found", arguments: tampers)
    func tampering(_ tamper: Tamper) async throws {
        try await ScratchDatabase.with(prefix: "audittm") { scratch, database in
            let log = AuditLog(database: database)
            for index in 0..<60 { try await log.append(.proofPNGRead, subject: "delivery:T-\(index % 20)", origin: .system) }
            let key = try Ed25519PrivateKey.generate()
            _ = try await AuditCheckpointStore(database: database, key: key).current()
            guard case .ok = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() else { Issue.record("not ok before tampering"); return }

            let events = try await log.events(AuditQuery(limit: 100)).events
            let chain = Dictionary(grouping: events, by: \.chain).max { $0.value.count < $1.value.count }!.key
            let ours = events.filter { $0.chain == chain }
            #expect(ours.count >= 5)
            var edited = ours[1]
            edited.subject = "delivery:other"
            var sql = tamper.sql.map { statement in
                statement.replacingOccurrences(of: "$SLAST", with: String(ours[ours.count - 1].seq))
                    .replacingOccurrences(of: "$SPREV", with: String(ours[ours.count - 2].seq))
                    .replacingOccurrences(of: "$HPREV", with: "'\\x\(ours[ours.count - 2].hash.hexString)'::bytea")
                    .replacingOccurrences(of: "$H1X", with: "'\\x\(edited.recomputedHash.hexString)'::bytea")
                    .replacingOccurrences(of: "$S1", with: String(ours[1].seq))
                    .replacingOccurrences(of: "$S2", with: String(ours[2].seq))
                    .replacingOccurrences(of: "$C", with: String(chain))
            }
            sql = ["ALTER TABLE audit_events DISABLE TRIGGER USER", "ALTER TABLE audit_chains DISABLE TRIGGER USER"] + sql
                + ["ALTER TABLE audit_events ENABLE TRIGGER USER", "ALTER TABLE audit_chains ENABLE TRIGGER USER"]
            try await scratch.asSuperuser { admin in
                try await admin.withConnection { session in for statement in sql { try await session.execute(statement) } }
            }
            let result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider, pageSize: 7).verify()
            guard case .broken(let failure) = result else { Issue.record("\(tamper.name): not detected"); return }
            #expect(failure.kind == tamper.kind, "\(tamper.name): \(failure)")
            switch tamper.reportedSeq {
            case -1: #expect(failure.seq == ours[ours.count - 1].seq && failure.chain == chain, "\(failure)")
            case -2: #expect(failure.seq == ours[ours.count - 2].seq && failure.chain == chain, "\(failure)")
            case let index?: #expect(failure.seq == ours[index].seq, "\(failure)")
            case nil: break
            }
            if tamper.name.hasPrefix("truncate a tail below") { #expect(failure.found == "chain \(chain) ends at \(ours[ours.count - 2].seq)") }
        }
    }

    @Test("events and a v1 checkpoint written before migration 0009 keep verifying after it, next to new chains")
    func legacyChainSurvivesMigration() async throws {
        try await ScratchDatabase.with(prefix: "auditmg", migratedThrough: 7) { scratch, database, migrations in
            let runner = MigrationRunner(client: database)
            // The single chain as the code before 0009 wrote it: seq from 1, no gaps, the v1 encoding.
            var legacy: [AuditEvent] = []
            var prev = AuditEvent.genesisHash
            for seq in Int64(1)...5 {
                var event = AuditEvent(seq: seq, occurredAtMicros: 1_700_000_000_000_000 + seq * 86_400_000_000 * 20, actorKeyID: nil,
                                       actorRole: "cli", action: "key_created", subject: "key:\(seq)", requestID: nil, clientAddress: nil,
                                       userAgent: nil, detailsJSON: #"{"name":"k\#(seq)"}"#, prevHash: prev, hash: [], chain: 0, encoding: .v1)
                event.hash = event.recomputedHash
                prev = event.hash
                legacy.append(event)
                try await database.query("""
                    INSERT INTO audit_events (seq, occurred_at, actor_role, action, subject, details_text, prev_hash, hash)
                    SELECT h.s, to_timestamp(0) + $2 * interval '1 microsecond', 'cli', 'key_created', $3, $4, $5, $6
                    FROM (SELECT coalesce(max(head_seq), 0) + 1 AS s FROM countersign_audit_head()) h WHERE h.s = $1
                    """, [seq, event.occurredAtMicros, event.subject, event.detailsJSON, PostgresBytes(event.prevHash), PostgresBytes(event.hash)])
            }
            let key = try Ed25519PrivateKey.generate()
            let old = try AuditCheckpoint.signLegacy(seq: 5, headHash: prev, key: key)
            try await database.query("""
                INSERT INTO audit_checkpoints (seq, head_hash, signed_at, algorithm, public_key, signature)
                VALUES (5, $1, to_timestamp(0) + $2 * interval '1 microsecond', 'Ed25519', $3, $4)
                """, [PostgresBytes(prev), old.signedAtMicros, PostgresBytes(old.publicKey), PostgresBytes(old.signature)])

            _ = try await runner.migrate(migrations)
            let partitions = try await database.query("""
                SELECT count(*) FROM pg_inherits WHERE inhparent = 'audit_events'::regclass
                """).decode(Int.self, row: 0, column: 0)
            #expect(partitions >= 5 + 1, "a partition per month with events, plus the default")
            let copied = try await AuditLog(database: database).events(AuditQuery(limit: 10)).events
            #expect(copied == legacy, "same seq, fields and hashes; chain 0, v1")
            var expectedHeads = (0..<16).map { AuditChainHead.empty(Int16($0)) }
            expectedHeads[0] = AuditChainHead(chain: 0, seq: 5, hash: prev)
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify(trustedPublicKeys: [key.publicKey])
                    == .ok(count: 5, heads: expectedHeads))

            // New events: v2, numbered after the old ones, chain 0 continuing from the old head.
            let log = AuditLog(database: database)
            var appended: [AuditEvent] = []
            for index in 0..<40 { appended.append(try await log.append(.proofPNGRead, subject: "delivery:N-\(index)", origin: .system)) }
            #expect(appended.allSatisfy { $0.encoding == .v2 && $0.seq > 5 })
            let firstOnZero = try #require(appended.first { $0.chain == 0 })
            #expect(firstOnZero.prevHash == prev)
            _ = try await AuditCheckpointStore(database: database, key: key).current()
            guard case .ok(let count, let heads, _) = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify(trustedPublicKeys: [key.publicKey]) else {
                Issue.record("not ok after new events")
                throw CancellationError()
            }
            let current = try await Self.heads(database)
            #expect(count == 45 && heads == current)
            let versions = try await database.query("SELECT version FROM audit_checkpoints ORDER BY id").rows.map { try $0.decode(Int.self, 0) }
            #expect(versions == [1, 2])

            // A v1 checkpoint is still checked: one naming another hash for seq 5 is refused.
            try await AuditCheckpointStore(database: database, key: key)
                .store(try AuditCheckpoint.signLegacy(seq: 5, headHash: legacy[3].hash, key: key))
            var result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify()
            guard case .broken(let failure) = result else { Issue.record("v1 checkpoint not checked"); throw CancellationError() }
            #expect(failure.kind == .checkpointMismatch && failure.seq == 5 && failure.chain == 0)

            // A v1 event may only sit in chain 0's old prefix: moved to another chain, it is named.
            try await scratch.asSuperuser { admin in
                try await admin.withConnection { session in
                    try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
                    try await session.execute("UPDATE audit_events SET chain = 3 WHERE seq = 2")
                    try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
                }
            }
            result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify()
            guard case .broken(let moved) = result else { Issue.record("moved v1 event not found"); throw CancellationError() }
            #expect(moved.kind == .encodingInvalid && moved.seq == 2)
        }
    }

    @Test("proofs stored before the audit log get a proof_recorded event from migration 0004, and verify")
    func backfill() async throws {
        try await ScratchDatabase.with(prefix: "auditbf", migratedThrough: 2) { scratch, database, migrations in
            let runner = MigrationRunner(client: database)
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
            let result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify()
            guard case .ok(let count, _, _) = result else { Issue.record("not ok: \(result)"); throw CancellationError() }
            #expect(count == 2)
            let events = try await AuditLog(database: database).events(AuditQuery(limit: 10)).events
            #expect(events.map(\.subject) == ["delivery:OLD-1", "delivery:OLD-2"], "oldest proof first")
            #expect(events.allSatisfy { $0.actorRole == "system" && $0.details["source"] == "migration_0004" })
            #expect(events.allSatisfy { $0.chain == 0 && $0.encoding == .v1 })
            // The backfilled events stay chain 0's prefix; new events chain on, and their proofs are re-hashed.
            let next = try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:OLD-1", origin: .system)
            #expect(next.seq == 3)
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() == .ok(count: 3, heads: try await Self.heads(database)))
        }
    }
}
