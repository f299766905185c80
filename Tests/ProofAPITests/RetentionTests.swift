import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
@testable import ProofService
import ProofStore
import Testing
import TestSupport

/// The retention policy (migration 0027): set only by the owner, enforced by the database. The
/// job erases exactly the deliveries it makes due — old enough, not pending, not held — each with
/// its `delivery_erased` event, and the runtime role can neither set the policy nor choose what
/// it erases.
@Suite("Retention", .needsDatabase)
struct RetentionTests {
    @Test("the job erases old closed deliveries and nothing held, pending or recent; the runtime role cannot set the policy; the chain verifies and names each erasure")
    func theJobErasesWhatThePolicyMakesDue() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (old, oldUpload) = try await harness.createDeliveryWithProof(client)
                let (held, heldUpload) = try await harness.createDeliveryWithProof(client)
                let (recent, recentUpload) = try await harness.createDeliveryWithProof(client)
                try #require(oldUpload.status == .created && heldUpload.status == .created && recentUpload.status == .created)
                let pending = try await harness.createDelivery(client)
                let cancelled = try await harness.createDelivery(client)
                let cancel = try await ErasureTests.post(client, harness, "/v1/deliveries/\(cancelled)/cancel", as: .dispatcher,
                                                         #"{"reason":"Order withdrawn"}"#)
                try #require(cancel.status == .ok, "\(cancel.json)")
                let hold = try await ErasureTests.post(client, harness, "/v1/deliveries/\(held)/legal-hold", as: .auditor,
                                                       #"{"reason":"Claim 12"}"#, method: .put)
                try #require(hold.status == .ok)
                // Four of them created 400 days ago (the guards off: a closed delivery never changes).
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.executeScript("ALTER TABLE deliveries DISABLE TRIGGER USER")
                        try await session.query("""
                            UPDATE deliveries SET created_at = created_at - interval '400 days'
                            WHERE reference = ANY(string_to_array(\([old, held, pending, cancelled].joined(separator: ",")), ','))
                            """)
                        try await session.executeScript("ALTER TABLE deliveries ENABLE TRIGGER USER")
                    }
                }
                let retention = RetentionRepository(database: harness.database)
                let job = RetentionService(retention: retention, interval: .seconds(3600), batch: 1, pause: .zero)
                #expect(try await retention.policy() == .forever)
                #expect(try await job.sweep() == 0, "no policy, nothing erased")

                // The runtime role reads the policy but cannot set it.
                let refused = await #expect(throws: PostgresError.self) {
                    try await harness.database.query("UPDATE retention_policy SET days = 1")
                }
                #expect(refused?.sqlState == "42501")
                let (first, again) = try await harness.scratch.asSuperuser { owner -> (RetentionPolicy, RetentionPolicy) in
                    let owned = RetentionRepository(database: owner)
                    return (try await owned.setPolicy(.days(365)), try await owned.setPolicy(.days(365)))
                }
                #expect(first == .forever && again == .days(365), "the second changed nothing (and appended no event)")
                #expect(try await retention.policy() == .days(365))

                #expect(try await job.sweep() == 2, "batch by batch: the old delivered one and the old cancelled one")
                #expect(try await job.sweep() == 0, "nothing more is due")
                let states = try await harness.database.query("""
                    SELECT reference::text, erasure_rule FROM deliveries WHERE erased_at IS NOT NULL ORDER BY reference
                    """).rows.map { try $0.decode((String, String).self) }
                #expect(states.map(\.0) == [old, cancelled].sorted() && states.allSatisfy { $0.1 == "retention" }, "\(states)")
                for reference in [held, pending, recent] {
                    let png = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                       headers: harness.headers(.dispatcher))
                    #expect(png.status != .gone, "\(reference) is kept")
                }
                let gone = try await client.execute(uri: "/v1/deliveries/\(old)/proof/signature.png", method: .get, headers: harness.headers(.dispatcher))
                #expect(gone.status == .gone)

                // The runtime role calling the function itself erases nothing that is not due.
                let direct = try await harness.database.query("SELECT count(*) FROM countersign_erase_expired(1000)").decode(Int.self, row: 0, column: 0)
                #expect(direct == 0)

                let events = try await client.execute(uri: "/v1/audit/events?subject=delivery:\(old)", method: .get, headers: harness.headers(.auditor))
                let erasure = ((events.json["items"] as? [[String: Any]]) ?? []).first { $0["action"] as? String == "delivery_erased" }
                let details = erasure?["details"] as? [String: Any]
                #expect(details?["rule"] as? String == "retention" && (details?["reason"] as? String)?.contains("365 days") == true, "\(details ?? [:])")
                let policyEvents = try await harness.database.query("""
                    SELECT count(*) FROM audit_events WHERE action = 'retention_policy_set' AND subject = 'retention:policy'
                    """).decode(Int.self, row: 0, column: 0)
                #expect(policyEvents == 1)

                // The hold cleared, the next run takes it.
                let cleared = try await client.execute(uri: "/v1/deliveries/\(held)/legal-hold", method: .delete, headers: harness.headers(.auditor))
                #expect(cleared.status == .noContent)
                #expect(try await job.sweep() == 1)

                let report = try await AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider)
                    .verify(trustedPublicKeys: [], witnessed: [], incremental: false)
                guard case .ok = report.result else { Issue.record("\(report.result)"); return }
                #expect(Set(report.erasedDeliveries) == [old, cancelled, held])
            }
        }
    }

    @Test("RETENTION_DAYS takes days in 1...36500 or none, and refuses anything else naming the variable")
    func configuration() throws {
        #expect(try ServiceConfiguration.fromEnvironment(["RETENTION_DAYS": "3650"]).retentionPolicy == .days(3650))
        #expect(try ServiceConfiguration.fromEnvironment(["RETENTION_DAYS": "none"]).retentionPolicy == .forever)
        #expect(try ServiceConfiguration.fromEnvironment([:]).retentionPolicy == nil)
        for bad in ["0", "36501", "-5", "10d", "forever"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ServiceConfiguration.fromEnvironment(["RETENTION_DAYS": bad]) }
        }
    }
}
