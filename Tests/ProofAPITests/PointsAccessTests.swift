import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import Testing
import TestSupport

/// The raw dynamics of a signature are behavioural biometric data: only auditors and admins read
/// them (`read_points`), every read is audited, with the reader's reason when one is given.
@Suite("Access to the raw dynamics", .needsDatabase)
struct PointsAccessTests {
    @Test("a dispatcher sees the image but not the points; an auditor's read is audited with its reason; a bad reason is 422 and unrecorded")
    func pointsNeedTheirOwnPermission() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                try #require(upload.status == .created)
                let base = "/v1/deliveries/\(reference)/proof"

                let png = try await client.execute(uri: base + "/signature.png", method: .get, headers: harness.headers(.dispatcher))
                #expect(png.status == .ok, "the dispatcher still sees the signature")
                for path in ["/points", "/points?format=inkml", "/points?reason=Dispute%204711"] {
                    let refused = try await client.execute(uri: base + path, method: .get, headers: harness.headers(.dispatcher))
                    #expect(refused.status == .forbidden, "\(path)")
                    #expect(refused.json["code"] as? String == "forbidden")
                    #expect((refused.json["detail"] as? String)?.contains("admin, auditor") == true, "the detail names who may")
                }
                let session = try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.dispatcher))
                #expect((session.json["permissions"] as? [String])?.contains("read_points") == false)
                let auditorSession = try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.auditor))
                #expect((auditorSession.json["permissions"] as? [String])?.contains("read_points") == true)

                let badReasons = ["", "%20%20", String(repeating: "x", count: 201), "case%0A42", "%E2%80%AEcase"]
                for reason in badReasons {
                    let refused = try await client.execute(uri: base + "/points?reason=\(reason)", method: .get, headers: harness.headers(.auditor))
                    #expect(refused.status == .unprocessableContent, "reason \(reason.prefix(20))")
                    #expect((refused.json["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_reason", "reason \(reason.prefix(20))")
                }

                let withReason = try await client.execute(uri: base + "/points?reason=%20Dispute%204711%20", method: .get,
                                                          headers: harness.headers(.auditor))
                #expect(withReason.status == .ok)
                let inkml = try await client.execute(uri: base + "/points?format=inkml&reason=Ticket%20%C3%9C-9", method: .get,
                                                     headers: harness.headers(.admin))
                #expect(inkml.status == .ok)
                let plain = try await client.execute(uri: base + "/points", method: .get, headers: harness.headers(.auditor))
                #expect(plain.status == .ok)

                let events = try await client.execute(uri: "/v1/audit/events?subject=delivery:\(reference)&action=proof_points_read",
                                                      method: .get, headers: harness.headers(.auditor))
                let details = try #require((events.json["items"] as? [[String: Any]])?.compactMap { $0["details"] as? [String: String] })
                #expect(details.count == 3, "the three reads, and none of the refused ones")
                #expect(details.map { $0["reason"] } == ["Dispute 4711", "Ticket Ü-9", nil], "the reason, trimmed, when one was given")
                #expect(details.map { $0["format"] } == ["original", "inkml", "original"])
            }
        }
    }
}
