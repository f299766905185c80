import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import Testing
import TestSupport
@testable import ProofAPI

@Suite("Re-rendering uses the stored options", .needsDatabase)
struct StoredRenderOptionsHTTPTests {
    @Test("SVG and resized PNG follow the proof's stored render_options, not today's defaults")
    func reRenderFollowsStoredOptions() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, upload) = try await harness.createDeliveryWithProof(client)
                #expect(upload.status == .created)
                let base = "/v1/deliveries/\(reference)/proof"
                let svgBefore = String(decoding: try await client.execute(uri: base + "/signature.svg", method: .get,
                                                                          headers: harness.headers(.auditor)).bytes, as: UTF8.self)
                #expect(svgBefore.contains(##"fill="#000000""##))
                let pngBefore = try await client.execute(uri: base + "/signature.png?width=300", method: .get, headers: harness.headers(.auditor))

                // A proof stored while the defaults were different: rewrite its options as the superuser.
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withTransaction { session in
                        try await session.execute("SET LOCAL session_replication_role = replica")
                        try await session.execute("""
                            UPDATE proofs SET render_options = render_options || '{"color":"#c81e1e","background":"white"}'::jsonb
                            WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = $1)
                            """, [reference])
                    }
                }

                let svgAfter = String(decoding: try await client.execute(uri: base + "/signature.svg", method: .get,
                                                                         headers: harness.headers(.auditor)).bytes, as: UTF8.self)
                #expect(svgAfter.contains(##"<path fill="#C81E1E""##))
                #expect(svgAfter.contains(##"<rect width="100%" height="100%" fill="#FFFFFF""##))
                let pngAfter = try await client.execute(uri: base + "/signature.png?width=300", method: .get, headers: harness.headers(.auditor))
                #expect(pngAfter.status == .ok)
                #expect(pngAfter.bytes != pngBefore.bytes)
            }
        }
    }
}
