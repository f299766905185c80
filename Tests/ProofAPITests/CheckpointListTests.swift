import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofService
import ProofStore
import Testing
import TestSupport

@Suite("Checkpoint list", .needsDatabase)
struct CheckpointListTests {
    @Test("GET /v1/audit/checkpoints lists stored checkpoints oldest first with witness status, keyset-paged; bad paging is 422")
    func list() async throws {
        try await APITestHarness.with { harness in
            let path = NSTemporaryDirectory() + "witness-api-\(UInt64.random(in: 0...UInt64.max))"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let publisher = CheckpointPublisher(store: AuditCheckpointStore(database: harness.database, key: harness.checkpointKey),
                                                receipts: WitnessReceiptStore(database: harness.database), directory: WitnessDirectory(path: path))
            try await harness.application().test(.router) { client in
                _ = try await AuditTests.deliver(client, harness)
                let scheduled = try #require(try await publisher.tick())
                _ = try await AuditTests.deliver(client, harness)
                // Signed on request: stored, but published to no witness.
                #expect(try await client.execute(uri: "/v1/audit/checkpoint", method: .get, headers: harness.headers(.auditor)).status == .ok)

                let first = try await client.execute(uri: "/v1/audit/checkpoints?limit=1", method: .get, headers: harness.headers(.auditor))
                #expect(first.status == .ok)
                let items = try #require(first.json["items"] as? [[String: Any]])
                #expect(items.count == 1)
                #expect(items[0]["id"] as? Int == Int(scheduled.id))
                #expect(items[0]["witness_status"] as? String == "witnessed")
                let witnesses = try #require(items[0]["witnesses"] as? [[String: Any]])
                #expect(witnesses.first?["kind"] as? String == "directory" && witnesses.first?["succeeded"] as? Bool == true)
                #expect(witnesses.first?["witness"] as? String == WitnessFile.name(for: scheduled.checkpoint))
                let checkpoint = try #require(items[0]["checkpoint"] as? [String: Any])
                #expect(checkpoint["signature"] as? String == scheduled.checkpoint.signature.hexString)

                let next = try #require(first.json["next"] as? String)
                let second = try await client.execute(uri: next, method: .get, headers: harness.headers(.admin))
                let rest = try #require(second.json["items"] as? [[String: Any]])
                #expect(rest.count == 1 && rest[0]["witness_status"] as? String == "none")
                #expect(second.json["next"] is NSNull || second.json["next"] == nil)

                for bad in ["limit=0", "cursor=!!!", "limit=abc"] {
                    let refused = try await client.execute(uri: "/v1/audit/checkpoints?\(bad)", method: .get, headers: harness.headers(.auditor))
                    #expect(refused.status == .unprocessableContent, "\(bad)")
                }
                #expect(try await client.execute(uri: "/v1/audit/checkpoints", method: .get, headers: harness.headers(.courier)).status == .forbidden)
            }
        }
    }
}
