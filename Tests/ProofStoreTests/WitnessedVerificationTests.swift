import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// `verify --database --checkpoints`: an insider with full control of the database rewrites or cuts
/// the chains and their stored checkpoints; checkpoints kept by a witness still catch it.
@Suite("Witnessed checkpoints", .needsDatabase)
struct WitnessedVerificationTests {
    /// A log of 60 events, a witnessed checkpoint, 30 more, a second one, then 10 unwitnessed events.
    struct Fixture {
        let key: Ed25519PrivateKey
        let witnessed: [WitnessedCheckpoint]
        /// The chain with the most events, and its events by ascending seq.
        let chain: Int16
        let events: [AuditEvent]
    }

    static func fixture(_ database: PostgresClient) async throws -> Fixture {
        let log = AuditLog(database: database)
        let key = try Ed25519PrivateKey.generate()
        let store = AuditCheckpointStore(database: database, key: key)
        var witnessed: [WitnessedCheckpoint] = []
        for (round, count) in [60, 30].enumerated() {
            for index in 0..<count { try await log.append(.proofPNGRead, subject: "delivery:W-\(index % 20)", origin: .system) }
            let stored = try #require(try await store.signIfMoved())
            witnessed.append(WitnessedCheckpoint(name: "w\(round)", checkpoint: stored.checkpoint))
        }
        #expect(try await store.signIfMoved() == nil, "nothing moved: nothing signed")
        for index in 0..<10 { try await log.append(.proofPNGRead, subject: "delivery:W-\(index % 20)", origin: .system) }
        let events = try await log.events(AuditQuery(limit: 200)).events
        let chain = Dictionary(grouping: events, by: \.chain).max { $0.value.count < $1.value.count }!.key
        return Fixture(key: key, witnessed: witnessed, chain: chain, events: events.filter { $0.chain == chain })
    }

    static func tamper(_ scratch: ScratchDatabase, _ statements: [String]) async throws {
        let sql = ["ALTER TABLE audit_events DISABLE TRIGGER USER", "ALTER TABLE audit_chains DISABLE TRIGGER USER",
                   "ALTER TABLE audit_checkpoints DISABLE TRIGGER USER"] + statements
            + ["ALTER TABLE audit_events ENABLE TRIGGER USER", "ALTER TABLE audit_chains ENABLE TRIGGER USER",
               "ALTER TABLE audit_checkpoints ENABLE TRIGGER USER"]
        try await scratch.asSuperuser { admin in
            try await admin.withConnection { session in for statement in sql { try await session.execute(statement) } }
        }
    }

    static func bytea(_ bytes: [UInt8]) -> String { "'\\x\(bytes.hexString)'::bytea" }

    @Test("an intact log verifies against its witnesses; the unwitnessed window counts the 10 newest events; incremental walks only them")
    func intact() async throws {
        try await ScratchDatabase.with(prefix: "witness") { _, database in
            let fixture = try await Self.fixture(database)
            let verifier = AuditVerifier(database: database, dataKeys: TestDataKeys.provider, pageSize: 7)
            let full = try await verifier.verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: false)
            guard case .ok(let count, _, _) = full.result else { Issue.record("\(full.result)"); return }
            #expect(count == 100)
            #expect(full.witnessedChecked == 2 && full.startedAfter == nil)
            #expect(full.window?.since == "w1" && full.window?.events == 10)
            let incremental = try await verifier.verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: true)
            guard case .ok(let walked, _, _) = incremental.result else { Issue.record("\(incremental.result)"); return }
            #expect(walked == 10, "only the events after the newest witnessed checkpoint")
            #expect(incremental.startedAfter == "w1" && incremental.window?.events == 10)
        }
    }

    @Test("incremental: an attempt without its event received after the checkpoint is named; one from before it is left to the full run")
    func attemptsSinceTheCheckpoint() async throws {
        try await ScratchDatabase.with(prefix: "witness_attempts") { scratch, database in
            let fixture = try await Self.fixture(database)
            guard case .created(let delivery) = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
                .create(NewDelivery(reference: "W-A", recipientName: "R", address: "A", destination: nil), by: nil) else {
                Issue.record("delivery W-A not created")
                return
            }
            let key = try await APIKeyRepository(database: database).create(name: "courier", role: .courier).key.id
            /// Inserts an attempt behind the service (no event), received at `receivedAt`.
            func insertAttempt(receivedAt: String) async throws {
                try await scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE delivery_attempts DISABLE TRIGGER USER")
                        try await session.execute("""
                            INSERT INTO delivery_attempts (id, delivery_id, outcome, reason, captured_at, captured_at_offset_min,
                                captured_at_text, received_at, geofence_radius_m, recorded_by)
                            VALUES (gen_random_uuid(), \(delivery.id), 'failed', 'refused', \(receivedAt)::timestamptz, 0,
                                    '2026-01-01T00:00:00Z', \(receivedAt)::timestamptz, 100, \(key))
                            """)
                        try await session.execute("ALTER TABLE delivery_attempts ENABLE TRIGGER USER")
                    }
                }
            }
            let verifier = AuditVerifier(database: database, dataKeys: TestDataKeys.provider)
            func verify(incremental: Bool) async throws -> AuditVerification {
                try await verifier.verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: incremental).result
            }
            try await insertAttempt(receivedAt: "2001-01-01T00:00:00Z")
            guard case .ok = try await verify(incremental: true) else { Issue.record("history before the checkpoint is trusted"); return }
            guard case .broken(let full) = try await verify(incremental: false) else { Issue.record("the full run missed it"); return }
            #expect(full.kind == .attemptWithoutEvent)
            try await insertAttempt(receivedAt: "2099-01-01T00:00:00Z")
            guard case .broken(let recent) = try await verify(incremental: true) else { Issue.record("a new attempt without event passed"); return }
            #expect(recent.kind == .attemptWithoutEvent && recent.subject == "delivery:W-A")
        }
    }

    @Test("a witness file signed by another key, or with a broken signature, is refused before the database is read")
    func untrustedWitness() async throws {
        try await ScratchDatabase.with(prefix: "witness") { _, database in
            let fixture = try await Self.fixture(database)
            let other = try Ed25519PrivateKey.generate()
            let result = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify(trustedPublicKeys: [other.publicKey], witnessed: fixture.witnessed,
                                                                            incremental: false).result
            guard case .broken(let failure) = result else { Issue.record("untrusted witness accepted"); return }
            #expect(failure.kind == .checkpointUntrustedKey && failure.subject == "witness:w0")
            var forged = fixture.witnessed
            forged[1].checkpoint.heads[0].seq += 1
            let broken = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: forged,
                                                                            incremental: true).result
            guard case .broken(let invalid) = broken else { Issue.record("forged witness accepted"); return }
            #expect(invalid.kind == .checkpointSignatureInvalid && invalid.subject == "witness:w1")
        }
    }

    @Test("edit an event, recompute its chain, delete and re-sign the checkpoints with a new key: the witnesses catch it",
          arguments: [false, true])
    func rewrittenChain(incremental: Bool) async throws {
        try await ScratchDatabase.with(prefix: "witness") { scratch, database in
            let fixture = try await Self.fixture(database)
            // The insider rewrites the second event of the busiest chain and every later link of it.
            var statements: [String] = []
            var previous = fixture.events[0].hash
            for (index, original) in fixture.events.enumerated().dropFirst() {
                var event = original
                if index == 1 { event.subject = "delivery:forged" }
                event.prevHash = previous
                event.hash = event.recomputedHash
                previous = event.hash
                statements.append("UPDATE audit_events SET subject = '\(event.subject)', prev_hash = \(Self.bytea(event.prevHash)), "
                                  + "hash = \(Self.bytea(event.hash)) WHERE seq = \(event.seq)")
            }
            statements.append("UPDATE audit_chains SET head_hash = \(Self.bytea(previous)) WHERE chain = \(fixture.chain)")
            statements.append("DELETE FROM audit_checkpoints")
            try await Self.tamper(scratch, statements)
            let forger = try Ed25519PrivateKey.generate()
            _ = try await AuditCheckpointStore(database: database, key: forger).signIfMoved()
            // The database alone now looks intact to anyone who trusts whatever key signed it.
            #expect(try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() == .ok(count: 100, heads: try await Self.heads(database)))

            let report = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider, pageSize: 9)
                .verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: incremental)
            guard case .broken(let failure) = report.result else { Issue.record("rewrite not detected"); return }
            #expect(failure.kind == .witnessHeadMissing, "\(failure)")
            #expect(failure.chain == fixture.chain)
            #expect(failure.subject?.hasPrefix("witness:w") == true)
        }
    }

    @Test("checkpoints deleted from the database are named by the witnesses that still hold them")
    func deletedCheckpoints() async throws {
        try await ScratchDatabase.with(prefix: "witness") { scratch, database in
            let fixture = try await Self.fixture(database)
            try await Self.tamper(scratch, ["DELETE FROM audit_checkpoints WHERE seq = \(fixture.witnessed[0].checkpoint.seq)"])
            for incremental in [false, true] {
                let report = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider)
                    .verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: incremental)
                if incremental {
                    // An incremental run checks only the newest witnessed checkpoint (and later ones): w0 is older.
                    #expect(report.result.isOK, "\(report.result)")
                    continue
                }
                guard case .broken(let failure) = report.result else { Issue.record("deletion not detected"); return }
                #expect(failure.kind == .witnessCheckpointMissing && failure.subject == "witness:w0", "\(failure)")
            }
        }
    }

    @Test("a tail cut below a witnessed checkpoint, head rewound and stored checkpoints deleted, is a named break")
    func cutWitnessedTail() async throws {
        try await ScratchDatabase.with(prefix: "witness") { scratch, database in
            let fixture = try await Self.fixture(database)
            let witnessedHead = try #require(fixture.witnessed[1].checkpoint.heads.first { $0.chain == fixture.chain })
            let kept = try #require(fixture.events.last { $0.seq < witnessedHead.seq })
            try await Self.tamper(scratch, [
                "DELETE FROM audit_events WHERE chain = \(fixture.chain) AND seq > \(kept.seq)",
                "UPDATE audit_chains SET head_seq = \(kept.seq), head_hash = \(Self.bytea(kept.hash)) WHERE chain = \(fixture.chain)",
                "DELETE FROM audit_checkpoints",
            ])
            for incremental in [false, true] {
                let report = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider)
                    .verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: incremental)
                guard case .broken(let failure) = report.result else { Issue.record("cut not detected"); return }
                #expect(failure.kind == .witnessHeadMissing && failure.chain == fixture.chain, "\(failure)")
                #expect(failure.seq == witnessedHead.seq)
                if !incremental { #expect(failure.found == "chain \(fixture.chain) ends at \(kept.seq)") }
            }
        }
    }

    @Test("a tail cut above the newest witnessed checkpoint, head rewound, is not a break but shrinks the unwitnessed window")
    func cutUnwitnessedTail() async throws {
        try await ScratchDatabase.with(prefix: "witness") { scratch, database in
            let fixture = try await Self.fixture(database)
            let witnessedHead = try #require(fixture.witnessed[1].checkpoint.heads.first { $0.chain == fixture.chain })
            let cut = fixture.events.filter { $0.seq > witnessedHead.seq }
            try #require(!cut.isEmpty, "the busiest chain has unwitnessed events")
            try await Self.tamper(scratch, [
                "DELETE FROM audit_events WHERE chain = \(fixture.chain) AND seq > \(witnessedHead.seq)",
                "UPDATE audit_chains SET head_seq = \(witnessedHead.seq), head_hash = \(Self.bytea(witnessedHead.hash)) WHERE chain = \(fixture.chain)",
            ])
            let report = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider)
                .verify(trustedPublicKeys: [fixture.key.publicKey], witnessed: fixture.witnessed, incremental: true)
            #expect(report.result.isOK, "\(report.result)")
            #expect(report.window?.events == Int64(10 - cut.count), "the window is what no witness covers")
        }
    }

    static func heads(_ database: PostgresClient) async throws -> [AuditChainHead] {
        try await database.withConnection { session in try await AuditCheckpointStore.heads(in: session) }
    }
}

extension AuditVerification {
    var isOK: Bool {
        if case .ok = self { return true }
        return false
    }
}
