import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PNG
import Postgres
import SignatureKit
import SignatureRender
import Testing
import TestSupport
@testable import ProofAPI

@Suite("Stored render options")
struct StoredRenderOptionsTests {
    @Test("what is stored with a proof reads back as the same options")
    func roundTrip() {
        var options = RenderOptions()
        options.layout.scale = 3
        options.layout.trim = true
        options.layout.margin = 8
        options.color = RGBColor(red: 200, green: 30, blue: 30)
        options.background = .white
        options.tolerance = 0.2
        options.png.compressor = .zlib
        let json = StoredRenderOptions.json(options)
        #expect(json.contains(#""png_compressor":"zlib""#))
        #expect(StoredRenderOptions.options(json, base: RenderOptions()) == options)
        #expect(StoredRenderOptions.json(RenderOptions()).contains(#""png_compressor":"run-length""#))
        #expect(StoredRenderOptions.options(StoredRenderOptions.json(RenderOptions()), base: options) == RenderOptions())
    }

    @Test("a proof stored before the compressor was recorded is re-encoded with zlib, as it was written")
    func olderProofsUseZlib() {
        var zlib = RenderOptions()
        zlib.png.compressor = .zlib
        #expect(RenderOptions().png.compressor == .runLength)
        #expect(StoredRenderOptions.options(##"{"scale":2,"color":"#000000"}"##, base: RenderOptions()) == zlib)
        // An unknown name keeps the base value, like any other malformed member.
        #expect(StoredRenderOptions.options(#"{"png_compressor":"lzw"}"#, base: RenderOptions()).png.compressor == .runLength)
    }

    @Test("missing, malformed or out-of-range members keep the base value")
    func lenient() {
        let base = RenderOptions()
        #expect(StoredRenderOptions.options("not json", base: base) == base)
        #expect(StoredRenderOptions.options(#"{"png_compressor":"run-length"}"#, base: base) == base)
        let odd = StoredRenderOptions.options(#"{"scale":-1,"width":0,"trim":"yes","color":"red","background":"plaid","tolerance":true,"png_compressor":"run-length"}"#, base: base)
        #expect(odd == base)
    }
}

@Suite("Re-rendering uses the stored options", .enabled(if: ScratchDatabase.isAvailable, Comment(rawValue: ScratchDatabase.unavailableReason)))
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
