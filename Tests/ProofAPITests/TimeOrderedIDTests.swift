import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofAPI
import ProofStore
import Testing
import TestSupport

/// Deliveries (the database's default, migration 0020, run as the runtime role), proofs and
/// attempts (made by the service) get version 7 ids whose time is when they were made.
@Suite("Time-ordered ids", .needsDatabase)
struct TimeOrderedIDTests {
    /// The Unix time in milliseconds of a version 7 id; nil for any other version.
    static func milliseconds(_ text: String?) -> Int64? {
        guard let text, let id = UUID(uuidString: text) else { return nil }
        let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
        guard bytes[6] >> 4 == 7, bytes[8] >> 6 == 0b10 else { return nil }
        return bytes[0..<6].reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    @Test("a delivery's, a proof's and an attempt's id carry the time they were made; later ones sort later")
    func versionSeven() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                // PostgreSQL's clock and ours are the same host's; a second's slack covers rounding.
                let before = Self.now() - 1_000
                var deliveryIDs: [String] = []
                for reference in ["V7-A", "V7-B"] {
                    let created = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                           body: ByteBuffer(string: Samples.deliveryJSON(reference: reference)))
                    #expect(created.status == .created)
                    deliveryIDs.append(try #require(created.json["id"] as? String))
                    try await Task.sleep(for: .milliseconds(3))
                }
                let attempt = try await client.execute(uri: "/v1/deliveries/V7-A/attempts", method: .post, headers: harness.headers(.courier),
                                                       body: ByteBuffer(string: DeliveryLifecycleTests.attemptJSON()))
                #expect(attempt.status == .created)
                let upload = try await client.execute(uri: "/v1/deliveries/V7-A/proof", method: .post, headers: harness.headers(.courier),
                                                      body: ByteBuffer(string: Samples.proofJSON()))
                #expect(upload.status == .created)
                let after = Self.now() + 1_000

                let times = [deliveryIDs[0], deliveryIDs[1], attempt.json["id"] as? String, upload.json["proof_id"] as? String]
                    .map(Self.milliseconds)
                #expect(times.allSatisfy { $0.map { (before...after).contains($0) } ?? false }, "\(times)")
                #expect(deliveryIDs[0] < deliveryIDs[1], "a later delivery sorts later")
                // The proof's id holds its receipt time, to the millisecond.
                let receivedAt = try #require((upload.json["received_at"] as? String).flatMap {
                    try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                })
                #expect(times[3] == Int64((receivedAt.timeIntervalSince1970 * 1000).rounded()))
            }
        }
    }
}
