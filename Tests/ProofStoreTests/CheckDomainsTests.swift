import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Migration 0011: the single-column CHECK constraints of the tables an upload writes became
/// domains (PostgreSQL re-parses table constraints for every statement, not domains).
@Suite("Check domains (0011)", .needsDatabase)
struct CheckDomainsTests {
    /// Statements that each break one rule; every one must fail with SQLSTATE 23514.
    static let violations: [(rule: String, sql: String)] = {
        let zeros = "'\\x" + String(repeating: "00", count: 32) + "'::bytea"
        let delivery = "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon) VALUES"
        let idempotency = "INSERT INTO idempotency_records (api_key_id, idempotency_key, request_sha256, state) SELECT id,"
        let audit = """
            INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_role, action, subject, details_text, prev_hash, hash) VALUES
            """
        /// The stored proof again under a new id with `field` set to `json` (jsonb_populate_record
        /// coerces each field to its column type, as an INSERT of that value would).
        func proof(_ field: String, _ json: String) -> String {
            """
            INSERT INTO proofs SELECT (jsonb_populate_record(p, jsonb_build_object('id', gen_random_uuid(), '\(field)', \(json)))).*
            FROM proofs p LIMIT 1
            """
        }
        return [
            ("empty reference", "\(delivery) ('', 'R', 'A', 0, 0)"),
            ("reference over 64 characters", "\(delivery) ('\(String(repeating: "r", count: 65))', 'R', 'A', 0, 0)"),
            ("destination latitude above 90", "\(delivery) ('D-1', 'R', 'A', 90.5, 0)"),
            ("destination longitude of 180", "\(delivery) ('D-2', 'R', 'A', 0, 180)"),
            ("destination longitude below -180", "\(delivery) ('D-3', 'R', 'A', 0, -180.01)"),
            ("unknown delivery status", "INSERT INTO deliveries (reference, recipient_name, address, status) VALUES ('D-4', 'R', 'A', 'lost')"),
            ("latitude set by an UPDATE", "UPDATE deliveries SET destination_lat = -91 WHERE reference = 'PENDING'"),
            ("offset beyond 18 hours", proof("captured_at_offset_min", "1081")),
            ("location latitude below -90", proof("location_lat", "-90.5")),
            ("location longitude of 180", proof("location_lon", "180")),
            ("negative accuracy", proof("location_accuracy_m", "-1")),
            ("negative distance", proof("distance_to_destination_m", "-0.5")),
            ("body digest of 1 byte", proof("body_sha256", "'\\\\x00'")),
            ("PNG digest of 33 bytes", proof("png_sha256", "'\\\\x" + String(repeating: "ab", count: 33) + "'")),
            ("empty idempotency key", "\(idempotency) '', \(zeros), 'in_flight' FROM api_keys LIMIT 1"),
            ("idempotency key over 255 characters", "\(idempotency) '\(String(repeating: "k", count: 256))', \(zeros), 'in_flight' FROM api_keys LIMIT 1"),
            ("request digest of 31 bytes", "\(idempotency) 'k31', '\\x\(String(repeating: "00", count: 31))'::bytea, 'in_flight' FROM api_keys LIMIT 1"),
            ("unknown idempotency state", "\(idempotency) 'kx', \(zeros), 'done' FROM api_keys LIMIT 1"),
            ("audit seq 0", "\(audit) (0, 0, 2, now(), 'cli', 'a', 's', '{}', \(zeros), \(zeros))"),
            ("negative audit chain", "\(audit) (9000001, -1, 2, now(), 'cli', 'a', 's', '{}', \(zeros), \(zeros))"),
            ("unknown audit encoding", "\(audit) (9000002, 0, 3, now(), 'cli', 'a', 's', '{}', \(zeros), \(zeros))"),
            ("unknown actor role", "\(audit) (9000003, 0, 2, now(), 'root', 'a', 's', '{}', \(zeros), \(zeros))"),
            ("empty audit action", "\(audit) (9000004, 0, 2, now(), 'cli', '', 's', '{}', \(zeros), \(zeros))"),
            ("short previous hash", "\(audit) (9000005, 0, 2, now(), 'cli', 'a', 's', '{}', '\\x00'::bytea, \(zeros))"),
            ("short event hash", "\(audit) (9000006, 0, 2, now(), 'cli', 'a', 's', '{}', \(zeros), '\\x00'::bytea)"),
            ("negative chain head", "INSERT INTO audit_chains (chain, head_seq, head_hash) VALUES (-1, 0, \(zeros))"),
            ("negative head seq", "INSERT INTO audit_chains (chain, head_seq, head_hash) VALUES (16, -1, \(zeros))"),
            ("short head hash", "INSERT INTO audit_chains (chain, head_seq, head_hash) VALUES (16, 0, '\\x00'::bytea)"),
        ]
    }()

    @Test("0011 on a database holding data: every value kept, every rule still refuses its bad values, only two-column table checks left")
    func domainsKeepDataAndRules() async throws {
        try await ScratchDatabase.with(prefix: "domains", migratedThrough: 10) { _, database, migrations in
            // Data written before 0011: a key, a delivered delivery with its proof and audit event, a
            // pending delivery and an idempotency record.
            // Today's repositories also write the webhook outbox (0015), a proof's device signature
            // columns (0017) and its delivery's data key (0025): stand-ins for them while they write the
            // old data, dropped before the migrations run (the proof's bytes put back in clear, as then).
            let outbox = """
                CREATE SEQUENCE webhook_events_id_seq;
                CREATE TABLE webhook_endpoints (id uuid, events text[], deleted_at timestamptz);
                CREATE TABLE webhook_events (id bigint, message_id uuid, type text, delivery_id uuid, endpoint_id uuid,
                    occurred_at timestamptz, payload text);
                CREATE TABLE webhook_deliveries (event_id bigint, endpoint_id uuid);
                ALTER TABLE proofs ADD COLUMN device_key_id uuid, ADD COLUMN device_signature bytea;
                \(PreSealingStandIns.create)
                """
            try await database.withConnection { try await $0.executeScript(outbox) }
            let (key, _) = try await APIKeyRepository(database: database).create(name: "courier", role: .courier)
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider), proofs = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
            // Plain SQL: today's repository reads columns later migrations add (0014's closing facts).
            for reference in ["DONE", "PENDING"] {
                try await database.query("""
                    INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                    VALUES (\(reference)::text, 'R', 'A', -33.9, 151.2)
                    """)
            }
            var proof = PartitionedProofsTests.proof(receivedAt: Date(), uploadedBy: key.id)
            proof.capture.location = CaptureLocation(point: GeoPoint(lat: -33.8, lon: 151.1), accuracyMeters: 12.5)
            proof.assessment.distanceToDestinationMeters = 14_000.25
            try await proofs.record(proof, reference: "DONE")
            #expect(try await IdempotencyRepository(database: database).claim(apiKeyID: key.id, key: "first", requestSHA256: proof.body.sha256) == .claimed)
            let before = try await proofs.metadata(reference: "DONE")

            try await database.withConnection {
                try await $0.executeScript("""
                    DROP TABLE webhook_deliveries, webhook_events, webhook_endpoints; DROP SEQUENCE webhook_events_id_seq;
                    ALTER TABLE proofs DROP COLUMN device_key_id, DROP COLUMN device_signature;
                    """)
            }
            try await PreSealingStandIns.unseal(proof, in: database)
            #expect(try await MigrationRunner(client: database).migrate(migrations).contains(11))
            try await PreSealingStandIns.restoreKeys(in: database)

            let after = try #require(try await proofs.metadata(reference: "DONE"))
            #expect(after == before)
            #expect(after.location == proof.capture.location && after.distanceToDestinationMeters == 14_000.25)
            #expect(try await proofs.body(reference: "DONE")?.bytes == proof.body.bytes)
            let delivered = try #require(try await deliveries.find(reference: "DONE"))
            #expect(delivered.status == .delivered && delivered.destination == GeoPoint(lat: -33.9, lon: 151.2))
            #expect(try await IdempotencyRepository(database: database).claim(apiKeyID: key.id, key: "first", requestSHA256: proof.body.sha256) == .inFlight)
            guard case .ok(let events, _, _) = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() else {
                Issue.record("the audit chains no longer verify after 0011")
                return
            }
            #expect(events >= 1)  // the proof's (the deliveries were inserted without events)

            // What PostgreSQL re-parses per statement: only the constraints over two columns.
            let tableChecks = try await database.query("""
                SELECT conrelid::regclass::text || '.' || conname FROM pg_constraint
                WHERE contype = 'c' AND conrelid = ANY (ARRAY['deliveries', 'proofs', 'idempotency_records', 'audit_events', 'audit_chains']::regclass[])
                ORDER BY 1
                """).rows.map { try $0.decode(String.self, 0) }
            // deliveries_erased_facts (0026) spans the erasure's columns; it is checked on every delivery write.
            #expect(tableChecks == ["deliveries.deliveries_check", "deliveries.deliveries_check1", "deliveries.deliveries_closed_facts",
                                    "deliveries.deliveries_erased_facts", "proofs.proofs_check", "proofs.proofs_device_signature_check"])

            for violation in Self.violations {
                do {
                    try await database.query(violation.sql)
                    Issue.record("accepted: \(violation.rule)")
                } catch let error as PostgresError {
                    #expect(error.kind == .checkViolation, "\(violation.rule): \(error)")
                }
            }
            #expect(try await PartitionedProofsTests.count("SELECT count(*) FROM proofs", in: database) == 1)
            #expect(try await PartitionedProofsTests.count("SELECT count(*) FROM deliveries", in: database) == 2)
        }
    }
}
