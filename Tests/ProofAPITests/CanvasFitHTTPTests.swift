import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofStore
import SignatureKit
import SignatureRender
import Testing
import TestSupport
@testable import ProofAPI

/// Issue 21: a real signature is never refused for its canvas. A canvas whose ×2 PNG would be over
/// the pixel cap (or 4096 px a side) is rendered at the largest scale that fits, and the proof's
/// stored render options record that scale, so its SVG and re-renders follow it.
@Suite("Portrait and tall canvases", .needsDatabase)
struct CanvasFitHTTPTests {
    /// A synthetic signature in countersign.ink/v1 that climbs the whole height of a `width` × `height` canvas.
    static func tallInkJSON(width: Int, height: Int) -> String {
        let strokes = (0..<3).map { s in
            let points = (0..<60).map { i in
                let y = Double(height) * (0.05 + 0.9 * Double(i) / 59)
                let x = Double(width) * (0.2 + 0.3 * Double(s) + 0.1 * sin(Double(i) / 4 + Double(s)))
                return "[\(String(format: "%.2f", x)),\(String(format: "%.2f", y)),\(s * 1000 + i * 12),0.5]"
            }
            return "[" + points.joined(separator: ",") + "]"
        }
        return #"{"canvas":{"width":\#(width),"height":\#(height)},"strokes":[\#(strokes.joined(separator: ","))]}"#
    }

    /// Width and height from a PNG's IHDR.
    static func pngSize(_ png: [UInt8]) -> (width: Int, height: Int) {
        func int(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }

    @Test("600×1145, an iPad's 1024×1366 and a 200×10000 strip: 201, PNG within the cap, the scale stored and followed",
          arguments: [(600, 1145, 1.906), (1024, 1366, 1.336), (200, 10_000, 0.409)])
    func portraitCanvasIsStoredAtAFittingScale(width: Int, height: Int, scale: Double) async throws {
        let cap = RenderOptions().maxPixels
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, upload) = try await harness.createDeliveryWithProof(
                    client, body: Samples.proofJSON(ink: Self.tallInkJSON(width: width, height: height)))
                #expect(upload.status == .created, "\(width)×\(height): \(upload.problemCode ?? "")")
                let base = "/v1/deliveries/\(reference)/proof"

                let metadata = try await client.execute(uri: base, method: .get, headers: harness.headers(.auditor)).json
                let options = try #require(metadata["render_options"] as? [String: Any])
                #expect(options["scale"] as? Double == scale)
                let png = try await client.execute(uri: base + "/signature.png", method: .get, headers: harness.headers(.auditor)).bytes
                let size = Self.pngSize(png)
                #expect(size.width * size.height <= cap && size.width <= 4096 && size.height <= 4096)
                #expect(size.width == (Double(width) * scale - 1e-9).rounded(.up).asInt)
                #expect(size.height == (Double(height) * scale - 1e-9).rounded(.up).asInt)
                let stored = try #require(metadata["png"] as? [String: Any])
                #expect(stored["width"] as? Int == size.width && stored["height"] as? Int == size.height)

                // The stored ink rendered with the stored options alone gives the stored PNG, byte for byte.
                // (Read through the repository: the ink is stored sealed.)
                let row = try #require(try await ProofRepository(database: harness.database, dataKeys: TestDataKeys.provider)
                    .ink(reference: reference))
                let ink = try InkParser().parse(row.ink, format: .ink)
                let storedOptions = StoredRenderOptions.options(row.renderOptionsJSON, base: RenderOptions())
                #expect(storedOptions.layout.scale == scale)
                #expect(try SignatureRenderer.renderPNG(ink, options: storedOptions).png == png)

                // The SVG has the stored PNG's size; a resized PNG stays within the cap.
                let svg = try await client.execute(uri: base + "/signature.svg", method: .get, headers: harness.headers(.auditor))
                #expect(svg.status == .ok)
                #expect(String(decoding: svg.bytes, as: UTF8.self).contains(#"width="\#(size.width)" height="\#(size.height)""#))
                let resized = try await client.execute(uri: base + "/signature.png?height=\(size.height / 2)", method: .get,
                                                       headers: harness.headers(.auditor))
                #expect(resized.status == .ok)
                let half = Self.pngSize(resized.bytes)
                #expect(half.height == size.height / 2 && half.width * half.height <= cap)
            }
        }
    }

    @Test("a canvas that fits at ×2 is stored at scale 2, as before; one over the ink limits is still 422")
    func otherCanvases() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (reference, upload) = try await harness.createDeliveryWithProof(
                    client, body: Samples.proofJSON(ink: Self.tallInkJSON(width: 600, height: 1000)))
                #expect(upload.status == .created)
                let row = try #require(try await harness.database.query(
                    "SELECT p.render_options::text, p.png_width, p.png_height FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = $1",
                    [reference]).first)
                let (json, width, height) = try row.decode((String, Int, Int).self)
                #expect(StoredRenderOptions.options(json, base: RenderOptions()) == RenderOptions())
                #expect(width == 1200 && height == 2000)

                let (_, tooTall) = try await harness.createDeliveryWithProof(
                    client, body: Samples.proofJSON(ink: Self.tallInkJSON(width: 600, height: 10_001)))
                #expect(tooTall.status == .unprocessableContent)
                #expect(tooTall.problemCode != "output_too_large")
            }
        }
    }
}

private extension Double {
    var asInt: Int { Int(self) }
}
