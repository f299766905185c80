import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofStore
import Testing
import TestSupport

/// What the API answers once the retention procedure (docs/scaling.md §4) has detached and
/// dropped the month partition holding a delivery's proof.
@Suite("Proof retention", .needsDatabase)
struct ProofRetentionTests {
    @Test("a proof whose month was dropped: 410 proof_archived for every proof read, the delivery still delivered, a new upload 409")
    func droppedMonth() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let sameMonth = try await harness.createDelivery(client)
                let base = "/v1/deliveries/\(reference)/proof"
                for target in [reference, sameMonth] {
                    let upload = try await client.execute(uri: "/v1/deliveries/\(target)/proof", method: .post,
                                                          headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON(signer: "Grace Hopper", location: nil)))
                    #expect(upload.status == .created)
                }
                let partition = try await harness.database.query("""
                    SELECT p.tableoid::regclass::text FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = $1
                    """, [reference]).decode(String.self, row: 0, column: 0)
                #expect(partition.hasPrefix("proofs_p"))
                let before = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.auditor))
                #expect((before.json["proof"] as? [String: Any])?["proof_id"] is String)
                let flag = try #require(((before.json["proof"] as? [String: Any])?["flags"] as? [String])?.first)
                let searches = ["/v1/deliveries?q=hopper&limit=10", "/v1/deliveries?flag=\(flag)&limit=10", "/v1/deliveries?q=hopper&status=delivered"]
                for uri in searches {
                    let found = try await client.execute(uri: uri, method: .get, headers: harness.headers(.auditor))
                    #expect((found.json["items"] as? [[String: Any]])?.count == 2, "\(uri)")
                }

                // The retention procedure, minus the archive and dump steps: detach the month, then drop
                // it and delete its search rows in one transaction (as the owner: the runtime role the
                // service connects as may do none of these).
                try await PostgresClient.withClient(.forTests(url: harness.scratch.ownerURL, poolSize: 1)) { owner in
                    try await owner.query("ALTER TABLE proofs DETACH PARTITION \(unescaped: partition)")
                    try await owner.withTransaction { session in
                        try await session.query("""
                            DELETE FROM proof_search s USING \(unescaped: partition) p JOIN deliveries d ON d.id = p.delivery_id
                            WHERE s.delivery_seq = d.seq
                            """)
                        try await session.query("DROP TABLE \(unescaped: partition)")
                    }
                }

                let auditor = harness.headers(.auditor)
                for path in ["", "/signature.png", "/signature.svg", "/points"] {
                    let response = try await client.execute(uri: base + path, method: .get, headers: auditor)
                    #expect(response.status == .gone, "\(path)")
                    #expect(response.json["code"] as? String == "proof_archived", "\(path)")
                }
                let delivery = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: auditor)
                #expect(delivery.status == .ok)
                #expect(delivery.json["status"] as? String == "delivered")
                #expect(delivery.json["proof"] is NSNull)
                // The delivery row still says delivered: no second proof can be recorded for it.
                let again = try await client.execute(uri: base, method: .post, headers: harness.headers(.courier),
                                                     body: ByteBuffer(string: Samples.proofJSON()))
                #expect(again.status == .conflict)
                #expect(again.json["code"] as? String == "proof_already_recorded")
                #expect(try await harness.database.query("SELECT count(*) FROM proofs").decode(Int.self, row: 0, column: 0) == 0)

                // The list still answers, and deliveries in the dropped month show no proof.
                let list = try await client.execute(uri: "/v1/deliveries?limit=10", method: .get, headers: auditor)
                #expect(list.status == .ok)
                let items = list.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 2)
                #expect(items.allSatisfy { $0["status"] as? String == "delivered" && $0["proof"] is NSNull })
                // A search by the dropped proofs' signer or flag no longer finds their deliveries.
                for uri in searches {
                    let search = try await client.execute(uri: uri, method: .get, headers: auditor)
                    #expect(search.status == .ok && (search.json["items"] as? [[String: Any]])?.isEmpty == true, "\(uri)")
                }

                // The maintenance recreates the month (empty), and new uploads for pending deliveries work again.
                let created = try await PartitionMaintenance(database: harness.database).run()
                #expect(created.map(\.partition) == [partition] && created.allSatisfy { $0.error == nil })
                let fresh = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(fresh)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                #expect(upload.status == .created)
                let defaultRows = try await PostgresClient.withClient(.forTests(url: harness.scratch.ownerURL, poolSize: 1)) { owner in
                    try await owner.query("SELECT count(*) FROM proofs_default").decode(Int.self, row: 0, column: 0)
                }
                #expect(defaultRows == 0)
            }
        }
    }
}
