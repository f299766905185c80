import CountersignClient
import Foundation
import InkTestSupport
import SignatureKit

/// Proofs built the way an app builds them.
enum Samples {
    /// A signature that passes the server's checks, recorded point by point.
    static func ink() throws -> CapturedInk {
        var recorder = InkRecorder(canvas: CanvasSize(width: 600, height: 200))
        for stroke in syntheticDocument(strokes: 3, perStroke: 40).strokes {
            recorder.beginStroke()
            for p in stroke.points { recorder.add(x: p.x, y: p.y, t: p.t, pressure: p.pressure) }
            recorder.endStroke()
        }
        return try recorder.finish()
    }

    static func submission(reference: String = "TRK-1", signer: String = "Ada Lovelace") throws -> ProofSubmission {
        ProofSubmission(reference: reference, signerName: signer, capturedAt: "2026-11-25T05:00:00.250+01:00",
                        location: .init(lat: 52.5201, lon: 13.4051, accuracyMeters: 8),
                        device: .init(id: "test-device", model: "Test", os: "Linux", app: "sdk-tests/1"),
                        ink: try ink())
    }

    /// A fresh, empty folder under the temporary directory, removed after `body`.
    static func withFolder<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try await body(folder)
    }
}
