import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofStore
import SignatureKit
import SignatureRender
import Testing
import TestSupport

@Suite("Proof retrieval", .needsDatabase)
struct ProofRetrievalTests {
    @Test("metadata, PNG with ETag/304, resized PNG, SVG, original points and InkML")
    func fetchEverything() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let body = Samples.proofJSON()
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: body))
                let pngSHA = try #require(upload.json["png_sha256"] as? String)
                let base = "/v1/deliveries/\(reference)/proof"
                let auditor = harness.headers(.auditor)

                let metadata = try await client.execute(uri: base, method: .get, headers: auditor)
                #expect(metadata.status == .ok)
                #expect(metadata.json["captured_at"] as? String == "2025-03-01T14:05:09.250+01:00")
                #expect(metadata.json["png_sha256"] as? String == pngSHA)
                #expect(metadata.json["algorithm_version"] as? String == SignatureReconstructor.algorithmVersion)
                #expect((metadata.json["uploaded_by"] as? [String: Any])?["role"] as? String == "courier")
                #expect((metadata.json["device"] as? [String: Any])?["model"] as? String == "Pixel 8")
                #expect((metadata.json["ink"] as? [String: Any])?["points"] as? Int == 120)

                let png = try await client.execute(uri: base + "/signature.png", method: .get, headers: auditor)
                #expect(png.status == .ok)
                #expect(png.headers[.contentType] == "image/png")
                #expect(png.headers[.eTag] == "\"\(pngSHA)\"")
                #expect(SHA256.hash(png.bytes).hexString == pngSHA)
                let notModified = try await client.execute(uri: base + "/signature.png", method: .get,
                                                           headers: harness.headers(.auditor, [.ifNoneMatch: "\"\(pngSHA)\""]))
                #expect(notModified.status == .notModified)
                #expect(notModified.bytes.isEmpty)

                let resized = try await client.execute(uri: base + "/signature.png?width=300&height=100", method: .get, headers: auditor)
                #expect(resized.status == .ok)
                let resizedAgain = try await client.execute(uri: base + "/signature.png?width=300&height=100", method: .get, headers: auditor)
                #expect(resized.bytes == resizedAgain.bytes, "deterministic")
                #expect(resized.bytes != png.bytes)
                let badSize = try await client.execute(uri: base + "/signature.png?width=0", method: .get, headers: auditor)
                #expect(badSize.status == .unprocessableContent)

                let svg = try await client.execute(uri: base + "/signature.svg", method: .get, headers: auditor)
                #expect(svg.status == .ok)
                #expect(svg.headers[.contentType] == "image/svg+xml")
                #expect(String(decoding: svg.bytes, as: UTF8.self).contains("<svg"))

                let points = try await client.execute(uri: base + "/points", method: .get, headers: auditor)
                #expect(points.bytes == Array(body.utf8))
                #expect(points.headers[.contentType] == "application/json")

                let inkml = try await client.execute(uri: base + "/points?format=inkml", method: .get, headers: auditor)
                #expect(inkml.headers[.contentType] == "application/inkml+xml")
                let reparsed = try InkParser().parse(inkml.bytes, format: .inkml)
                #expect(reparsed.pointCount == 120)

                for path in ["", "/signature.png", "/signature.svg", "/points"] {
                    let none = try await client.execute(uri: "/v1/deliveries/NOPE/proof\(path)", method: .get, headers: auditor)
                    #expect(none.status == .notFound, "\(path)")
                    #expect(none.problemCode == "proof_not_found")
                }
            }
        }
    }

    @Test("stored proofs cannot be changed or deleted, even with direct SQL")
    func immutable() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                _ = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                             headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                for sql in ["UPDATE proofs SET signer_name = 'forged'", "DELETE FROM proofs", "TRUNCATE proofs CASCADE",
                            "UPDATE deliveries SET status = 'pending', delivered_at = NULL"] {
                    await #expect(throws: PostgresError.self, "\(sql)") { try await harness.database.query(sql) }
                }
                let signer = try await harness.database.query("SELECT signer_name FROM proofs").decode(String.self, row: 0, column: 0)
                #expect(signer == "Ada Lovelace")
            }
        }
    }

    @Test("live server: upload a corpus signature, then PNG, SVG and the original bytes come back")
    func liveCorpusRoundTrip() async throws {
        let files = (try? FileManager.default.contentsOfDirectory(at: Samples.corpus.appendingPathComponent("svc2004-task1"),
                                                                    includingPropertiesForKeys: nil)) ?? []
        let signatureFile = files.filter { $0.pathExtension.uppercased() == "TXT" }.sorted { $0.path < $1.path }.first
        try await APITestHarness.with { harness in
            try await harness.application().test(.live) { client in
                let ink: String
                if let signatureFile {
                    // Convert the SVC2004 file into ink/v1 the way a client would.
                    let document = try InkParser().parse(Array(try Data(contentsOf: signatureFile)), format: .svc2004)
                    ink = InkSerializer.string(document)
                } else {
                    print("shared/corpus is absent: using a synthetic signature")
                    ink = Samples.inkJSON()
                }
                let reference = try await harness.createDelivery(client)
                let body = Samples.proofJSON(ink: ink)
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: body))
                #expect(upload.status == .created)
                let base = "/v1/deliveries/\(reference)/proof"
                let png = try await client.execute(uri: base + "/signature.png", method: .get, headers: harness.headers(.dispatcher))
                #expect(png.status == .ok)
                #expect(SHA256.hash(png.bytes).hexString == upload.json["png_sha256"] as? String)
                let expected = try SignatureRenderer.renderPNG(try InkParser().parse(InkSerializer.serialize(try InkParser().parse(ink)), format: .ink))
                #expect(png.bytes == expected.png, "the stored PNG is what `countersign render` makes of the stored ink")
                let svg = try await client.execute(uri: base + "/signature.svg", method: .get, headers: harness.headers(.dispatcher))
                #expect(svg.status == .ok)
                let points = try await client.execute(uri: base + "/points", method: .get, headers: harness.headers(.auditor))
                #expect(points.bytes == Array(body.utf8))
            }
        }
    }
}
