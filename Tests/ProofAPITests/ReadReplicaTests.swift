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

@Suite("DATABASE_READ_URL", .needsDatabase)
struct ReadReplicaTests {
    @Test("searches and audit listings read from the read database; writes, single look-ups and proofs use the primary")
    func routing() async throws {
        try await APITestHarness.with { harness in
            // A second database stands in for a replica that has not caught up: it holds one delivery of its own.
            try await ScratchDatabase.with(prefix: "replica") { _, replica in
                try await replica.query("""
                    INSERT INTO deliveries (reference, recipient_name, address) VALUES ('ONLY-ON-REPLICA', 'R', 'A')
                    """)
                try await harness.application(readDatabase: replica).test(.router) { client in
                    let reference = try await harness.createDelivery(client)
                    let list = try await client.execute(uri: "/v1/deliveries", method: .get, headers: harness.headers(.dispatcher))
                    let references = (list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["reference"] as? String }
                    #expect(references == ["ONLY-ON-REPLICA"])
                    let single = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.dispatcher))
                    #expect(single.status == .ok)
                    let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                          headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                    #expect(upload.status == .created)
                    let events = try await client.execute(uri: "/v1/audit/events", method: .get, headers: harness.headers(.auditor))
                    #expect((events.json["items"] as? [Any])?.isEmpty == true)
                    let verify = try await client.execute(uri: "/v1/audit/verify", method: .get, headers: harness.headers(.auditor))
                    #expect(verify.json["count"] as? Int == 0)
                    let checkpoint = try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor))
                    #expect((checkpoint.json["seq"] as? Int ?? 0) >= 2, "checkpoints sign the primary's head")
                }
            }
        }
    }
}
