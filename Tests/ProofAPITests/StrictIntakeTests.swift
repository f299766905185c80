import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofService
import ProofStore
import Testing
import TestSupport
@testable import ProofAPI

/// Issue 19's intake findings: a body may not mean two things (duplicate members), text may not
/// carry what a viewer cannot see or a C string would cut (controls, bidi overrides), lengths count
/// code points, and an impossible UTC offset is a 422, not a 500. Nothing refused is stored.
@Suite("Strict intake", .needsDatabase)
struct StrictIntakeTests {
    /// The field errors of a problem body.
    static func fields(_ response: TestResponse) -> [String] {
        (response.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }

    static func upload(_ client: some TestClientProtocol, _ harness: APITestHarness, _ reference: String, _ body: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: harness.headers(.courier),
                                 body: ByteBuffer(string: body))
    }

    static func stillPending(_ client: some TestClientProtocol, _ harness: APITestHarness, _ reference: String) async throws -> Bool {
        let delivery = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.dispatcher))
        return delivery.json["status"] as? String == "pending"
    }

    @Test("a member name twice in any object of a body is 422 duplicate_member naming it, and nothing is stored")
    func duplicateMembers() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let ink = Samples.inkJSON()
                let inkml = #""<ink xmlns='http://www.w3.org/2003/InkML'><trace>10 10, 20 20</trace></ink>""#
                let cases: [(String, String)] = [
                    // The finding: metadata from the first signer, every standard parser reading the second.
                    (#"{"signer":{"name":"Alice"},"signer":{"name":"Mallory"},"captured_at":"2025-03-01T14:05:09Z","ink":\#(ink)}"#, "/signer"),
                    (#"{"signer":{"name":"Alice","name":"Mallory"},"captured_at":"2025-03-01T14:05:09Z","ink":\#(ink)}"#, "/signer/name"),
                    (#"{"signer":{"name":"Alice"},"captured_at":"2025-03-01T14:05:09Z","inkml":\#(inkml),"inkml":\#(inkml)}"#, "/inkml"),
                    (#"{"signer":{"name":"Alice"},"captured_at":"2025-03-01T14:05:09Z","device":{"id":"a","\u0069d":"b"},"ink":\#(ink)}"#,
                     "/device/id"),
                    (Samples.proofJSON(ink: ink.replacingOccurrences(of: #""width":600"#, with: #""width":600,"width":601"#)),
                     "/ink/canvas/width"),
                ]
                for (body, field) in cases {
                    let response = try await Self.upload(client, harness, reference, body)
                    #expect(response.status == .unprocessableContent, "\(field)")
                    #expect(response.problemCode == "duplicate_member", "\(field)")
                    #expect(Self.fields(response) == [field])
                }
                #expect(try await Self.stillPending(client, harness, reference))

                let delivery = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                        body: ByteBuffer(string: #"{"reference":"DUP-1","reference":"DUP-2","recipient":{"name":"Ada"},"address":"1 Main St"}"#))
                #expect(delivery.status == .unprocessableContent)
                #expect(delivery.problemCode == "duplicate_member")
                #expect(Self.fields(delivery) == ["/reference"])
                for missing in ["DUP-1", "DUP-2"] {
                    let lookup = try await client.execute(uri: "/v1/deliveries/\(missing)", method: .get, headers: harness.headers(.dispatcher))
                    #expect(lookup.status == .notFound)
                }
            }
        }
    }

    @Test("NUL, other controls and bidi overrides in text are 422 invalid_character, never cut or stored")
    func controlCharacters() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                for signer in [#"Ada\u0000 Lovelace-Forged"#, #"Ada\u0007"#, #"Ada \u202Eecalevol"#, #"Ada\u2066x"#, #"Ada\u0085"#] {
                    let response = try await Self.upload(client, harness, reference, Samples.proofJSON(signer: signer))
                    #expect(response.status == .unprocessableContent, "\(signer)")
                    #expect(response.problemCode == "validation_failed", "\(signer)")
                    #expect((response.json["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_character", "\(signer)")
                    #expect(Self.fields(response) == ["/signer/name"], "\(signer)")
                }
                let device = Samples.proofJSON().replacingOccurrences(of: #""model":"Pixel 8""#, with: #""model":"Pixel\u00008""#)
                let refused = try await Self.upload(client, harness, reference, device)
                #expect(refused.status == .unprocessableContent)
                #expect(Self.fields(refused) == ["/device/model"])
                #expect(try await Self.stillPending(client, harness, reference))

                let recipient = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                         body: ByteBuffer(string: Samples.deliveryJSON(reference: "CTRL-1", name: #"Bob\u0000by"#)))
                #expect(recipient.status == .unprocessableContent)
                #expect(Self.fields(recipient) == ["/recipient/name"])
                let address = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                       body: ByteBuffer(string: Samples.deliveryJSON(reference: "CTRL-2", address: #"1 Main St\u001B[2J"#)))
                #expect(address.status == .unprocessableContent)
                #expect(Self.fields(address) == ["/address"])

                // Ordinary non-ASCII text is welcome.
                let fine = try await Self.upload(client, harness, reference, Samples.proofJSON(signer: "Zoë Ångström-Łukasiewicz 王"))
                #expect(fine.status == .created)
            }
        }
    }

    @Test("lengths count code points: 200 two-byte characters pass, 201 do not")
    func lengthsCountCodePoints() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let long = try await harness.createDelivery(client)
                let tooLong = try await Self.upload(client, harness, long, Samples.proofJSON(signer: String(repeating: "é", count: 201)))
                #expect(tooLong.status == .unprocessableContent)
                #expect((tooLong.json["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_length")
                let fits = try await Self.upload(client, harness, long, Samples.proofJSON(signer: String(repeating: "é", count: 200)))
                #expect(fits.status == .created)
            }
        }
    }

    @Test("captured_at with an offset beyond ±18:00 is 422 invalid_timestamp (it was a 500); ±18:00 itself is accepted")
    func offsetsBeyondEighteenHours() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                for capturedAt in ["2025-03-01T14:05:09+18:30", "2025-03-01T14:05:09-19:00", "2025-03-01T14:05:09+99:00"] {
                    let reference = try await harness.createDelivery(client)
                    let response = try await Self.upload(client, harness, reference, Samples.proofJSON(capturedAt: capturedAt))
                    #expect(response.status == .unprocessableContent, "\(capturedAt)")
                    #expect(Self.fields(response) == ["/captured_at"], "\(capturedAt)")
                    #expect((response.json["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_timestamp")
                }
                for capturedAt in ["2025-03-01T14:05:09+18:00", "2025-03-01T14:05:09-18:00"] {
                    let reference = try await harness.createDelivery(client)
                    let response = try await Self.upload(client, harness, reference, Samples.proofJSON(capturedAt: capturedAt))
                    #expect(response.status == .created, "\(capturedAt)")
                }
            }
        }
    }
}
