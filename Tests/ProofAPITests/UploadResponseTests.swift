import Foundation
import ProofService
import Testing
@testable import ProofAPI

/// The upload's 201 body is written by hand for speed; it must stay the bytes Foundation's encoder
/// gives for the same members (what earlier releases sent, and idempotent replays still hold).
@Suite("Upload response body")
struct UploadResponseTests {
    /// The body as `JSONResponse.encode` writes it, member by member as the API documents it.
    struct Reference: Encodable {
        var response: ProofRoutes.UploadResponse

        enum Keys: String, CodingKey {
            case reference, flags, links
            case proofID = "proof_id", receivedAt = "received_at", pointsSHA256 = "points_sha256", pngSHA256 = "png_sha256"
            case distance = "distance_to_destination_m"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(response.proofID.uuidString.lowercased(), forKey: .proofID)
            try c.encode(response.reference, forKey: .reference)
            try c.encode(RFC3339Timestamp.format(response.receivedAt), forKey: .receivedAt)
            try c.encode(response.pointsSHA256.hexString, forKey: .pointsSHA256)
            try c.encode(response.pngSHA256.hexString, forKey: .pngSHA256)
            try c.encode(response.distance.map(ProofLinks.roundMeters), forKey: .distance)
            try c.encode(response.flags, forKey: .flags)
            try c.encode(ProofLinks(reference: response.reference), forKey: .links)
        }
    }

    static let distances: [Double?] = [nil, 0, 0.004, 0.005, 0.01, 12.345, 100, 199.999, 1_234_567.891, 20_015_086.796]

    @Test("the hand-written body is the encoder's, byte for byte", arguments: distances)
    func sameBytesAsTheEncoder(distance: Double?) throws {
        let flags: [[String]] = [[], ["no_location"], ["outside_geofence", "poor_location_accuracy", "clock_ahead"]]
        for (index, flagSet) in flags.enumerated() {
            let response = ProofRoutes.UploadResponse(
                proofID: UUID(), reference: ["A-17", "x", "Zz.9_:-0123456789"][index],
                receivedAt: Date(timeIntervalSince1970: 1_763_900_000.123 + Double(index)),
                pointsSHA256: (0..<32).map { UInt8($0 * 7 % 256) }, pngSHA256: (0..<32).map { UInt8(255 - $0) },
                distance: distance, flags: flagSet)
            let expected = try JSONResponse.encode(Reference(response: response))
            #expect(String(decoding: response.json, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            // And it is JSON.
            #expect(try JSONSerialization.jsonObject(with: Data(response.json)) is [String: Any])
        }
    }
}
