import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport
@testable import ProofAPI

/// The README's worked example must keep working: the committed upload body is a valid proof.
@Suite("Worked example", .needsDatabase)
struct WorkedExampleTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/proof-upload.json")

    @Test("docs/examples/proof-upload.json, as the README sends it, is stored with no flag and its PNG can be fetched")
    func readmeUpload() async throws {
        let body = try Data(contentsOf: Self.example)
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client, reference: "PKG-1")
                var headers = harness.headers(.admin)
                headers[.idempotencyKey] = "PKG-1-try-1"
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: headers,
                                                      body: ByteBuffer(bytes: Array(body)))
                #expect(upload.status == .created)
                #expect(upload.json["flags"] as? [String] == [])
                let png = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                   headers: harness.headers(.admin))
                #expect(png.status == .ok)
                #expect(png.headers[.contentType] == "image/png")
            }
        }
    }
}
