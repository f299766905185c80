import Foundation
import ProofStore

/// The JSON of `GET /v1/deliveries/{reference}/proof`.
public enum ProofMetadataResource {
    public static func encode(_ proof: ProofMetadata) throws -> [UInt8] {
        try SortedJSONWriter.encode(object(proof))
    }

    /// The resource as a JSON object (also the `proof` member of an export's `metadata.json`).
    public static func object(_ proof: ProofMetadata) -> [String: Any] {
        var object: [String: Any] = [:]
        object["proof_id"] = proof.id.uuidString.lowercased()
        object["reference"] = proof.deliveryReference
        object["signer"] = ["name": proof.signerName]
        object["captured_at"] = RFC3339Timestamp.format(proof.capturedAt, offsetMinutes: proof.capturedAtOffsetMinutes)
        object["captured_at_as_sent"] = proof.capturedAtText
        object["received_at"] = RFC3339Timestamp.format(proof.receivedAt)
        if let location = proof.location {
            object["location"] = ["lat": location.point.lat, "lon": location.point.lon,
                                  "accuracy_m": location.accuracyMeters as Any? ?? NSNull()]
        } else {
            object["location"] = NSNull()
        }
        object["distance_to_destination_m"] = proof.distanceToDestinationMeters.map(ProofLinks.roundMeters) as Any? ?? NSNull()
        object["geofence_radius_m"] = proof.geofenceRadiusMeters
        object["flags"] = proof.flags
        object["device"] = ["id": proof.device.id as Any? ?? NSNull(), "model": proof.device.model as Any? ?? NSNull(),
                            "os": proof.device.os as Any? ?? NSNull(), "app": proof.device.app as Any? ?? NSNull()]
        object["original"] = ["content_type": proof.bodyContentType, "content_encoding": proof.bodyContentEncoding as Any? ?? NSNull(),
                              "size": proof.bodySize, "sha256": proof.bodySHA256.hexString]
        object["points_sha256"] = proof.bodySHA256.hexString
        object["ink"] = ["format": proof.inkFormat, "points": proof.pointCount, "strokes": proof.strokeCount]
        object["png"] = ["sha256": proof.pngSHA256.hexString, "width": proof.pngWidth, "height": proof.pngHeight]
        object["png_sha256"] = proof.pngSHA256.hexString
        object["render_options"] = (try? JSONSerialization.jsonObject(with: Data(proof.renderOptionsJSON.utf8))) ?? [:]
        object["algorithm_version"] = proof.algorithmVersion
        object["uploaded_by"] = ["key_id": proof.uploadedBy.keyID.uuidString.lowercased(), "name": proof.uploadedBy.name,
                                 "role": proof.uploadedBy.role.rawValue]
        let links = ProofLinks(reference: proof.deliveryReference)
        object["links"] = ["png": links.png, "svg": links.svg, "points": links.points, "metadata": links.metadata]
        return object
    }
}
