import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofService
import ProofStore
import SignatureKit
import SignatureRender
import Testing
import TestSupport

@Suite("Proof upload", .needsDatabase)
struct ProofUploadTests {
    @Test("upload is 201 with the documented fields; original bytes and PNG are stored as sent and rendered")
    func uploadStoresOriginalAndPNG() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let body = Samples.proofJSON()
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: body))
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/v1/deliveries/\(reference)/proof")
                let json = response.json
                #expect(Set(json.keys) == ["proof_id", "reference", "received_at", "points_sha256", "png_sha256",
                                           "distance_to_destination_m", "flags", "links"])
                #expect(json["reference"] as? String == reference)
                #expect(json["points_sha256"] as? String == SHA256.hash(Array(body.utf8)).hexString)
                #expect(json["flags"] as? [String] == [])
                let distance = try #require(json["distance_to_destination_m"] as? Double)
                #expect(distance > 5 && distance < 20)
                let links = try #require(json["links"] as? [String: String])
                #expect(links["png"] == "/v1/deliveries/\(reference)/proof/signature.png")

                // Stored sealed (0025): the columns hold no clear byte of the body, and open, byte for
                // byte, to it and to the PNG the renderer makes from the canonical ink.
                let row = try #require(try await harness.database.query(
                    "SELECT p.body, p.png, p.png_sha256, p.ink, p.body_content_type, p.sealing::int4 FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = $1",
                    [reference]).first)
                #expect(try row.decode(Int.self, 5) == 1, "sealed")
                let storedBody = try row.decode([UInt8].self, 0)
                #expect(storedBody.count == body.utf8.count + 28 && storedBody != Array(body.utf8))
                #expect(!String(decoding: storedBody, as: UTF8.self).contains("Ada Lovelace"), "no clear byte of the body in the column")
                let proofs = ProofRepository(database: harness.database, dataKeys: TestDataKeys.provider)
                #expect(try await proofs.body(reference: reference)?.bytes == Array(body.utf8))
                let png = try #require(try await proofs.png(reference: reference)?.bytes)
                #expect(try row.decode([UInt8].self, 1) != png)
                #expect(try row.decode([UInt8].self, 2) == SHA256.hash(png))
                #expect(SHA256.hash(png).hexString == json["png_sha256"] as? String)
                #expect(try row.decode(String.self, 4) == "application/json")
                let canonical = try #require(try await proofs.ink(reference: reference)?.ink)
                let expected = try SignatureRenderer.renderPNG(try InkParser().parse(canonical, format: .ink)).png
                #expect(png == expected)
                #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

                let delivery = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.courier))
                #expect(delivery.json["status"] as? String == "delivered")
                #expect((delivery.json["proof"] as? [String: Any])?["proof_id"] as? String == json["proof_id"] as? String)
            }
        }
    }

    @Test("unknown delivery 404, second proof 409, bad input 422 with field details")
    func errorPaths() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                func upload(_ reference: String, _ body: String) async throws -> TestResponse {
                    try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                             headers: harness.headers(.courier), body: ByteBuffer(string: body))
                }
                let missing = try await upload("NO-SUCH", Samples.proofJSON())
                #expect(missing.status == .notFound)
                #expect(missing.problemCode == "delivery_not_found")

                let reference = try await harness.createDelivery(client)
                let cases: [(String, String, String)] = [
                    (Samples.proofJSON(capturedAt: "2025-03-01T14:05:09"), "missing_offset", "/captured_at"),
                    (Samples.proofJSON(capturedAt: "yesterday"), "invalid_timestamp", "/captured_at"),
                    (Samples.proofJSON(signer: ""), "invalid_length", "/signer/name"),
                    (Samples.proofJSON(location: #"{"lat":91,"lon":0}"#), "out_of_range", "/location/lat"),
                    (Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":200},"strokes":[]}"#), "blank_signature", "/ink"),
                    (Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":200},"strokes":[[[1,1,0],[2,2,-500]]]}"#), "time_backwards", "/ink/strokes/0/1"),
                    (Samples.proofJSON(signatureMember: "nothing"), "missing_field", "/ink"),
                    (#"{"signer":{"name":"A"},"captured_at":"2025-03-01T14:05:09Z","signature_pad":[]}"#, "missing_field", "/canvas"),
                ]
                for (body, code, field) in cases {
                    let response = try await upload(reference, body)
                    #expect(response.status == .unprocessableContent, "\(code)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                    let errors = (response.json["errors"] as? [[String: Any]]) ?? []
                    #expect(errors.contains { $0["code"] as? String == code && $0["field"] as? String == field },
                            "expected \(code) at \(field), got \(errors)")
                }
                let notJSON = try await upload(reference, "{\"signer\":")
                #expect(notJSON.status == .badRequest)

                #expect(try await upload(reference, Samples.proofJSON()).status == .created)
                let again = try await upload(reference, Samples.proofJSON(signer: "Someone Else"))
                #expect(again.status == .conflict)
                #expect(again.problemCode == "proof_already_recorded")
            }
        }
    }

    @Test("flags: outside_geofence, poor_location_accuracy, no_location, clock_ahead; late uploads are not flagged")
    func flags() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                func flags(_ body: String) async throws -> [String] {
                    let reference = try await harness.createDelivery(client)
                    let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                            headers: harness.headers(.courier), body: ByteBuffer(string: body))
                    #expect(response.status == .created)
                    return response.json["flags"] as? [String] ?? ["?"]
                }
                let flags1 = try await flags(Samples.proofJSON(location: #"{"lat":52.53,"lon":13.405,"accuracy_m":5}"#))
                #expect(flags1 == ["outside_geofence"])
                let flags2 = try await flags(Samples.proofJSON(location: #"{"lat":52.52,"lon":13.405,"accuracy_m":500}"#))
                #expect(flags2 == ["poor_location_accuracy"])
                let flags3 = try await flags(Samples.proofJSON(location: nil))
                #expect(flags3 == ["no_location"])
                let future = RFC3339Timestamp.format(Date().addingTimeInterval(3600))
                let flags4 = try await flags(Samples.proofJSON(capturedAt: future))
                #expect(flags4 == ["clock_ahead"])
                let flags5 = try await flags(Samples.proofJSON(capturedAt: "2020-01-01T00:00:00-05:00"))
                #expect(flags5 == [])
            }
        }
    }

    @Test("signature_pad and InkML bodies are accepted")
    func otherFormats() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                var groups: [String] = []
                for s in 0..<2 {
                    let points = (0..<30).map { i in
                        #"{"x":\#(50 + s * 200 + i * 5),"y":\#(80 + (i % 7) * 6),"time":\#(1_700_000_000_000 + s * 1000 + i * 16),"pressure":0.5}"#
                    }
                    groups.append(#"{"penColor":"black","points":[\#(points.joined(separator: ","))]}"#)
                }
                let pad = #"{"signer":{"name":"P"},"captured_at":"2025-03-01T14:05:09Z","canvas":{"width":500,"height":200},"signature_pad":[\#(groups.joined(separator: ","))]}"#
                let reference = try await harness.createDelivery(client)
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: pad))
                #expect(response.status == .created, "\(String(decoding: response.bytes, as: UTF8.self))")

                let traces = (0..<2).map { s in
                    "<trace>" + (0..<30).map { i in "\(100 + s * 300 + i * 8) \(200 + (i % 5) * 20) \(s * 900 + i * 15)" }.joined(separator: ", ") + "</trace>"
                }.joined()
                let inkml = #"<ink xmlns=\"http://www.w3.org/2003/InkML\"><traceFormat><channel name=\"X\"/><channel name=\"Y\"/><channel name=\"T\"/></traceFormat>\#(traces)</ink>"#
                let body = #"{"signer":{"name":"I"},"captured_at":"2025-03-01T14:05:09Z","inkml":"\#(inkml)"}"#
                let second = try await harness.createDelivery(client)
                let inkmlResponse = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post,
                                                             headers: harness.headers(.courier), body: ByteBuffer(string: body))
                #expect(inkmlResponse.status == .created, "\(String(decoding: inkmlResponse.bytes, as: UTF8.self))")
            }
        }
    }

    @Test("gzip bodies are inflated and stored as received; a gzip bomb is 413; an oversized body is 413")
    func gzipAndLimits() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(bodyLimit: 256 * 1024).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let plain = Array(Samples.proofJSON().utf8)
                let gzipped = Samples.gzip(plain)
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier, [.contentEncoding: "gzip"]),
                                                        body: ByteBuffer(bytes: gzipped))
                #expect(response.status == .created)
                #expect(response.json["points_sha256"] as? String == SHA256.hash(gzipped).hexString)

                let original = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/points", method: .get,
                                                        headers: harness.headers(.auditor))
                #expect(original.bytes == plain, "inflated for a client that does not accept gzip")
                let raw = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/points", method: .get,
                                                   headers: harness.headers(.auditor, [.acceptEncoding: "gzip"]))
                #expect(raw.bytes == gzipped)
                #expect(raw.headers[.contentEncoding] == "gzip")

                // 64 MiB of spaces compress to about 64 KB.
                let bomb = Samples.gzip([UInt8](repeating: 0x20, count: 64 << 20))
                #expect(bomb.count < 256 * 1024)
                let second = try await harness.createDelivery(client)
                let refused = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post,
                                                       headers: harness.headers(.courier, [.contentEncoding: "gzip"]),
                                                       body: ByteBuffer(bytes: bomb))
                #expect(refused.status == .contentTooLarge)
                #expect(refused.problemCode == "body_too_large")

                let broken = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post,
                                                      headers: harness.headers(.courier, [.contentEncoding: "gzip"]),
                                                      body: ByteBuffer(bytes: Array(gzipped.prefix(20))))
                #expect(broken.status == .badRequest)
                let brotli = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post,
                                                      headers: harness.headers(.courier, [.contentEncoding: "br"]),
                                                      body: ByteBuffer(bytes: plain))
                #expect(brotli.status == .unsupportedMediaType)

                let huge = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post, headers: harness.headers(.courier),
                                                    body: ByteBuffer(bytes: [UInt8](repeating: 0x20, count: 300 * 1024)))
                #expect(huge.status == .contentTooLarge)

                let stillPending = try await client.execute(uri: "/v1/deliveries/\(second)", method: .get, headers: harness.headers(.courier))
                #expect(stillPending.json["status"] as? String == "pending")
            }
        }
    }

    @Test("the engine's point limit is 422 too_many_points")
    func pointLimit() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(bodyLimit: 4 << 20).test(.router) { client in
                let points = (0..<50_001).map { i in "[\(i % 500),\(i % 100),\(i)]" }.joined(separator: ",")
                let ink = #"{"canvas":{"width":600,"height":200},"strokes":[[\#(points)]]}"#
                let reference = try await harness.createDelivery(client)
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON(ink: ink)))
                #expect(response.status == .unprocessableContent)
                #expect(response.problemCode == "too_many_points")
            }
        }
    }
}
