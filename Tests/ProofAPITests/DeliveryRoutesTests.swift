import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import ProofStore
import Testing
import TestSupport

@Suite("Deliveries", .needsDatabase)
struct DeliveryRoutesTests {
    @Test("create is 201 with Location, the same content again 200, other content 409")
    func createIdempotentByReference() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let body = Samples.deliveryJSON(reference: "TRK-1")
                let first = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                     body: ByteBuffer(string: body))
                #expect(first.status == .created)
                #expect(first.headers[.location] == "/v1/deliveries/TRK-1")
                #expect(first.json["status"] as? String == "pending")
                #expect((first.json["destination"] as? [String: Any])?["lat"] as? Double == 52.52)

                let again = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.admin),
                                                     body: ByteBuffer(string: body))
                #expect(again.status == .ok)
                #expect(again.json["id"] as? String == first.json["id"] as? String)

                let other = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                     body: ByteBuffer(string: Samples.deliveryJSON(reference: "TRK-1", address: "2 Other Rd")))
                #expect(other.status == .conflict)
                #expect(other.problemCode == "reference_conflict")

                let shown = try await client.execute(uri: "/v1/deliveries/TRK-1", method: .get, headers: harness.headers(.courier))
                #expect(shown.status == .ok)
                #expect(shown.json["reference"] as? String == "TRK-1")
                #expect(shown.json["proof"] is NSNull)

                let missing = try await client.execute(uri: "/v1/deliveries/NOPE", method: .get, headers: harness.headers(.courier))
                #expect(missing.status == .notFound)
                #expect(missing.problemCode == "delivery_not_found")
            }
        }
    }

    @Test("invalid deliveries are 422 with field errors; broken JSON is 400; another media type 415")
    func validation() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let bad = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                   body: ByteBuffer(string: #"{"reference":"has space","recipient":{},"destination":{"lat":95,"lon":"x"}}"#))
                #expect(bad.status == .unprocessableContent)
                #expect(bad.headers[.contentType] == "application/problem+json")
                let fields = ((bad.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }
                #expect(fields == ["/destination/lon"], "a type error is reported first: \(fields)")

                let invalid = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                       body: ByteBuffer(string: #"{"reference":"has space","recipient":{},"destination":{"lat":95,"lon":1}}"#))
                let invalidFields = Set(((invalid.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String })
                #expect(invalidFields == ["/reference", "/recipient/name", "/address", "/destination/lat"])

                let broken = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                      body: ByteBuffer(string: "{nope"))
                #expect(broken.status == .badRequest)
                let text = try await client.execute(uri: "/v1/deliveries", method: .post,
                                                    headers: harness.headers(.dispatcher, [.contentType: "text/plain"]),
                                                    body: ByteBuffer(string: "{}"))
                #expect(text.status == .unsupportedMediaType)
            }
        }
    }

    @Test("search by status, time, bbox (also across the antimeridian), near, with keyset pagination")
    func search() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                // Fiji straddles the 180th meridian: one east of it (lon 179.5), one west (-179.5 written as 180.5).
                try await harness.createDelivery(client, reference: "FJ-EAST", lat: -17.8, lon: 179.5)
                try await harness.createDelivery(client, reference: "FJ-WEST", lat: -17.8, lon: 180.5)
                try await harness.createDelivery(client, reference: "BERLIN", lat: 52.52, lon: 13.405)
                try await harness.createDelivery(client, reference: "POTSDAM", lat: 52.39, lon: 13.06)
                try await harness.createDelivery(client, reference: "NOWHERE", lat: nil, lon: nil)

                func references(_ query: String) async throws -> [String] {
                    let response = try await client.execute(uri: "/v1/deliveries?\(query)", method: .get, headers: harness.headers(.auditor))
                    #expect(response.status == .ok, "\(query)")
                    return ((response.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["reference"] as? String }
                }
                #expect(try await references("") == ["NOWHERE", "POTSDAM", "BERLIN", "FJ-WEST", "FJ-EAST"])
                #expect(try await references("bbox=179,-19,-179,-16") == ["FJ-WEST", "FJ-EAST"])
                #expect(try await references("bbox=179,-19,180,-16") == ["FJ-EAST"])
                #expect(try await references("bbox=-180,-19,-179,-16") == ["FJ-WEST"])
                #expect(try await references("bbox=13,52,14,53") == ["POTSDAM", "BERLIN"])
                #expect(try await references("near=52.52,13.40,5000") == ["BERLIN"])
                #expect(try await references("near=52.45,13.2,40000") == ["POTSDAM", "BERLIN"])
                #expect(try await references("near=-17.8,-179.9,100000") == ["FJ-WEST", "FJ-EAST"])
                #expect(try await references("status=delivered") == [])
                #expect(try await references("status=pending&since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z").count == 5)
                #expect(try await references("until=2000-01-01T00:00:00Z") == [])

                let west = try await client.execute(uri: "/v1/deliveries/FJ-WEST", method: .get, headers: harness.headers(.auditor))
                #expect((west.json["destination"] as? [String: Any])?["lon"] as? Double == -179.5)

                // Pages of two; an insert between pages does not shift what follows.
                var seen: [String] = []
                var uri = "/v1/deliveries?limit=2"
                var insertedMidway = false
                while true {
                    let page = try await client.execute(uri: uri, method: .get, headers: harness.headers(.dispatcher))
                    seen += ((page.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["reference"] as? String }
                    if !insertedMidway {
                        try await harness.createDelivery(client, reference: "LATE")
                        insertedMidway = true
                    }
                    guard let next = page.json["next"] as? String else { break }
                    uri = next
                }
                #expect(seen == ["NOWHERE", "POTSDAM", "BERLIN", "FJ-WEST", "FJ-EAST"])

                for bad in ["status=lost", "bbox=1,2,3", "bbox=0,10,1,5", "near=1,2", "limit=0", "limit=9999", "cursor=zzz", "since=yesterday"] {
                    let response = try await client.execute(uri: "/v1/deliveries?\(bad)", method: .get, headers: harness.headers(.auditor))
                    #expect(response.status == .unprocessableContent, "\(bad)")
                }
            }
        }
    }
}
