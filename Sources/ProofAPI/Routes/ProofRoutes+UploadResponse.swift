import Foundation
import ProofService

extension ProofRoutes {
    /// The response of a successful upload (also what an idempotent replay returns).
    struct UploadResponse {
        var proofID: UUID
        var reference: String
        var receivedAt: Date
        var pointsSHA256: [UInt8]
        var pngSHA256: [UInt8]
        var distance: Double?
        var flags: [String]

        /// The JSON body, written directly with its keys in sorted order: the bytes
        /// `JSONResponse.encode` gives for the same members (a test compares the two), at a small
        /// part of the cost of Foundation's encoder, which showed in profiles of the upload path.
        /// No value needs escaping: a reference is letters, digits and `._:-`,
        /// flags are fixed identifiers, the rest are hex, a UUID, a timestamp and a number.
        var json: [UInt8] {
            let links = ProofLinks(reference: reference)
            var text = #"{"distance_to_destination_m":"#
            if let distance {
                // As Foundation writes a Double: its description without a trailing ".0" (a
                // distance on Earth, to the centimetre, never reaches the exponent form).
                let number = ProofLinks.roundMeters(distance).description
                text += number.hasSuffix(".0") ? String(number.dropLast(2)) : number
            } else {
                text += "null"
            }
            text += #","flags":["# + flags.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            text += #","links":{"metadata":""# + links.metadata + #"","png":""# + links.png + #"","points":""# + links.points
            text += #"","svg":""# + links.svg + #""},"png_sha256":""# + pngSHA256.hexString
            text += #"","points_sha256":""# + pointsSHA256.hexString + #"","proof_id":""# + proofID.uuidString.lowercased()
            text += #"","received_at":""# + RFC3339Timestamp.format(receivedAt) + #"","reference":""# + reference + #""}"#
            return Array(text.utf8)
        }
    }
}

extension ProofRoutes.UploadResponse {
    /// The answer for a recorded proof.
    init(_ recorded: RecordedProof) {
        self.init(proofID: recorded.id, reference: recorded.reference, receivedAt: recorded.receivedAt,
                  pointsSHA256: recorded.bodySHA256, pngSHA256: recorded.pngSHA256,
                  distance: recorded.distanceToDestinationMeters, flags: recorded.flags.map(\.rawValue))
    }
}
