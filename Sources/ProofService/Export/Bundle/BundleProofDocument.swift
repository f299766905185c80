import Foundation
import ProofStore

/// `deliveries/<reference>/metadata.json` of a version 3 bundle, written by hand
/// (``CanonicalJSONWriter``, members sorted by name): `{"delivery": {...}, "files": {name: {"bytes",
/// "sha256"}} of the proof's other four files, "proof": <GET …/proof> with the exact values the
/// proof facts hash}`. Differences from `GET …/proof`: `distance_to_destination_m` is exact (not
/// rounded to the centimetre), and `captured_at_us`, `captured_at_offset_min` and `received_at_us`
/// are added — so a verifier recomputes `metadata_sha256` from this file alone (docs/audit.md).
enum BundleProofDocument {
    /// One of the proof's other files: its name in the folder, size and SHA-256, and whether the
    /// export leaves it out (``ExportContents``): then it is listed with `"omitted": true`.
    struct FileDigest: Sendable, Equatable {
        var name: String
        var bytes: Int
        var sha256: String
        var omitted = false
    }

    /// The document's bytes for `proof`, whose other files are `files` (sorted by name here).
    static func encode(_ proof: ExportedProof, files: [FileDigest]) -> [UInt8] {
        let metadata = proof.metadata
        var json = CanonicalJSONWriter()
        json.beginObject()
        if let salt = proof.commitmentSalt {
            // Only for a delivery with a data key (members sorted: commitment_salt, delivery, …).
            json.key("commitment_salt"); json.string(salt.bytes.hexString)
        }
        json.key("delivery")
        json.beginObject()
        json.key("address"); json.string(proof.address)
        json.key("destination")
        if let destination = proof.destination {
            json.beginObject()
            json.key("lat"); json.number(destination.lat)
            json.key("lon"); json.number(destination.lon)
            json.endObject()
        } else {
            json.null()
        }
        json.key("recipient"); json.beginObject(); json.key("name"); json.string(proof.recipientName); json.endObject()
        json.key("reference"); json.string(metadata.deliveryReference)
        json.endObject()
        if let signed = proof.deviceSignature {
            // Only for a device-signed upload (members sorted: delivery, device_signature, files, proof).
            json.key("device_signature")
            json.beginObject()
            json.key("key_id"); json.string(signed.keyID.lowercasedText)
            json.key("public_key"); json.string(Data(proof.devicePublicKey ?? []).base64EncodedString())
            json.key("signature"); json.string(Data(signed.signature).base64EncodedString())
            json.endObject()
        }
        json.key("files")
        json.beginObject()
        for file in files.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            json.key(file.name)
            json.beginObject()
            json.key("bytes"); json.int(file.bytes)
            if file.omitted { json.key("omitted"); json.bool(true) }
            json.key("sha256"); json.string(file.sha256)
            json.endObject()
        }
        json.endObject()
        json.key("proof")
        writeProof(proof, into: &json)
        json.endObject()
        return json.bytes
    }

    /// The `proof` member: `GET …/proof`'s members (sorted) plus the exact times.
    static func writeProof(_ proof: ExportedProof, into json: inout CanonicalJSONWriter) {
        let metadata = proof.metadata
        let links = ProofLinks(reference: metadata.deliveryReference)
        json.beginObject()
        json.key("algorithm_version"); json.string(metadata.algorithmVersion)
        json.key("captured_at")
        json.string(RFC3339Micros.format(proof.capturedAtMicros, offsetMinutes: metadata.capturedAtOffsetMinutes))
        json.key("captured_at_as_sent"); json.string(metadata.capturedAtText)
        json.key("captured_at_offset_min"); json.int(metadata.capturedAtOffsetMinutes)
        json.key("captured_at_us"); json.int(proof.capturedAtMicros)
        json.key("device")
        json.beginObject()
        json.key("app"); json.string(metadata.device.app)
        json.key("id"); json.string(metadata.device.id)
        json.key("model"); json.string(metadata.device.model)
        json.key("os"); json.string(metadata.device.os)
        json.endObject()
        json.key("distance_to_destination_m"); json.number(metadata.distanceToDestinationMeters)
        json.key("flags"); json.beginArray(); for flag in metadata.flags { json.string(flag) }; json.endArray()
        json.key("geofence_radius_m"); json.number(metadata.geofenceRadiusMeters)
        json.key("ink")
        json.beginObject()
        json.key("format"); json.string(metadata.inkFormat)
        json.key("points"); json.int(metadata.pointCount)
        json.key("strokes"); json.int(metadata.strokeCount)
        json.endObject()
        json.key("links")
        json.beginObject()
        json.key("metadata"); json.string(links.metadata)
        json.key("png"); json.string(links.png)
        json.key("points"); json.string(links.points)
        json.key("svg"); json.string(links.svg)
        json.endObject()
        json.key("location")
        if let location = metadata.location {
            json.beginObject()
            json.key("accuracy_m"); json.number(location.accuracyMeters)
            json.key("lat"); json.number(location.point.lat)
            json.key("lon"); json.number(location.point.lon)
            json.endObject()
        } else {
            json.null()
        }
        json.key("original")
        json.beginObject()
        json.key("content_encoding"); json.string(metadata.bodyContentEncoding)
        json.key("content_type"); json.string(metadata.bodyContentType)
        json.key("sha256"); json.string(metadata.bodySHA256.hexString)
        json.key("size"); json.int(metadata.bodySize)
        json.endObject()
        json.key("png")
        json.beginObject()
        json.key("height"); json.int(metadata.pngHeight)
        json.key("sha256"); json.string(metadata.pngSHA256.hexString)
        json.key("width"); json.int(metadata.pngWidth)
        json.endObject()
        json.key("png_sha256"); json.string(metadata.pngSHA256.hexString)
        json.key("points_sha256"); json.string(metadata.bodySHA256.hexString)
        json.key("proof_id"); json.string(metadata.id.lowercasedText)
        json.key("received_at"); json.string(RFC3339Micros.format(proof.receivedAtMicros, offsetMinutes: 0))
        json.key("received_at_us"); json.int(proof.receivedAtMicros)
        json.key("reference"); json.string(metadata.deliveryReference)
        // The stored jsonb text: valid JSON, and its values are what the facts digest encodes.
        json.key("render_options"); json.raw(metadata.renderOptionsJSON.isEmpty ? "{}" : metadata.renderOptionsJSON)
        json.key("signer"); json.beginObject(); json.key("name"); json.string(metadata.signerName); json.endObject()
        json.key("uploaded_by")
        json.beginObject()
        json.key("key_id"); json.string(metadata.uploadedBy.keyID.lowercasedText)
        json.key("name"); json.string(metadata.uploadedBy.name)
        json.key("role"); json.string(metadata.uploadedBy.role.rawValue)
        json.endObject()
        json.endObject()
    }
}
