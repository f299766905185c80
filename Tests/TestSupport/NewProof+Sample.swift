import Cryptography
import Foundation
import ProofStore

extension NewProof {
    /// A proof for storage tests: `body`, `ink` and `png` are stored as given (no rendering behind
    /// them) with their digests computed; captured when received, by `signer`, with no location.
    public static func sample(uploadedBy: UUID, signer: String = "Ada", receivedAt: Date = Date(),
                              body: [UInt8] = Array("{\"points\":[]}".utf8), ink: [UInt8] = [UInt8](repeating: 1, count: 40),
                              png: [UInt8] = [UInt8](repeating: 2, count: 90)) -> NewProof {
        NewProof(
            id: UUID(),
            capture: ProofCapture(signerName: signer, capturedAt: CaptureTime(date: receivedAt, offsetMinutes: 60, text: "2026-01-01T00:00:00+01:00"),
                                  location: nil, device: DeviceFacts()),
            body: ReceivedBody(bytes: body, contentType: "application/json", contentEncoding: nil, sha256: SHA256.hash(body),
                               receivedAt: receivedAt),
            rendering: ProofRendering(inkFormat: "ink", ink: ink, pointCount: 10, strokeCount: 1, png: png, pngSHA256: SHA256.hash(png),
                                      pngWidth: 10, pngHeight: 10, renderOptionsJSON: "{}", algorithmVersion: "test"),
            assessment: ProofAssessment(distanceToDestinationMeters: nil, geofenceRadiusMeters: 200, flags: [.noLocation]),
            uploadedBy: uploadedBy, idempotencyKey: nil)
    }
}
