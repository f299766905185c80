import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import ProofStore
import Testing
import TestSupport

@Suite("Delivery search: q and flag", .needsDatabase)
struct DeliverySearchRoutesTests {
    @Test("q finds the signer's name and the recipient; flag finds proofs with that flag; both page with next links")
    func textAndFlags() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let located = try await harness.createDeliveryWithProof(client, body: Samples.proofJSON(signer: "Grace Hopper"))
                #expect(located.upload.status == .created)
                let unlocated = try await harness.createDeliveryWithProof(client, body: Samples.proofJSON(signer: "Grace O'Neil", location: nil))
                #expect(unlocated.upload.status == .created)
                let body = Samples.deliveryJSON(reference: "PCT-1", name: "100% Hopper Ltd")
                _ = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher), body: ByteBuffer(string: body))

                func references(_ query: String) async throws -> [String] {
                    let response = try await client.execute(uri: "/v1/deliveries?\(query)", method: .get, headers: harness.headers(.auditor))
                    #expect(response.status == .ok, "\(query)")
                    return ((response.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["reference"] as? String }
                }
                #expect(try await references("q=GRACE") == [unlocated.reference, located.reference])
                #expect(try await references("q=hopper") == ["PCT-1", located.reference])
                #expect(try await references("q=100%25") == ["PCT-1"])
                #expect(try await references("q=pct-") == ["PCT-1"])
                // Issue 41: no three letters or digits in a row, no trigram: the reference's start only.
                for shape in ["q=%25%25%25", "q=---", "q=%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80", "q=e%20s"] {
                    #expect(try await references(shape) == [], "\(shape)")
                }
                #expect(try await references("flag=no_location") == [unlocated.reference])
                #expect(try await references("flag=outside_geofence") == [])
                #expect(try await references("flag=no_location&q=hopper") == [])
                #expect(try await references("status=delivered&q=grace") == [unlocated.reference, located.reference])

                let first = try await client.execute(uri: "/v1/deliveries?q=grace&limit=1", method: .get, headers: harness.headers(.auditor))
                let next = try #require(first.json["next"] as? String)
                #expect(next.contains("q=grace"))
                let second = try await client.execute(uri: next, method: .get, headers: harness.headers(.auditor))
                #expect(((second.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["reference"] as? String } == [located.reference])

                for (bad, field) in [("q=ab", "q"), ("q=%20%20ab%20", "q"), ("q=a%07bc", "q"), ("q=" + String(repeating: "x", count: 101), "q"),
                                     ("flag=late", "flag"), ("flag=", "flag"), ("status=lost", "status")] {
                    let response = try await client.execute(uri: "/v1/deliveries?\(bad)", method: .get, headers: harness.headers(.auditor))
                    #expect(response.status == .unprocessableContent, "\(bad)")
                    let fields = ((response.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }
                    #expect(fields == [field], "\(bad)")
                }
            }
        }
    }
}
