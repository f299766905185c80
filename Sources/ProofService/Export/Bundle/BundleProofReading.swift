import Foundation
import ProofStore

/// A version 3 `metadata.json` read back: what the verifier needs to recompute the proof facts
/// digest (`metadata_sha256`) and to check the folder's other files. Decoded strictly: a missing
/// or mistyped member is a failure naming the file, never a crash.
struct BundleProofReading: Decodable {
    struct Delivery: Decodable {
        var reference: String
    }

    struct File: Decodable {
        var bytes: Int
        var sha256: String
    }

    struct Signer: Decodable { var name: String }
    struct Location: Decodable {
        var lat: Double
        var lon: Double
        var accuracyM: Double?
        enum CodingKeys: String, CodingKey { case lat, lon, accuracyM = "accuracy_m" }
    }

    struct Device: Decodable { var id, model, os, app: String? }
    struct Original: Decodable {
        var contentType: String
        var contentEncoding: String?
        var sha256: String
        var size: Int
        enum CodingKeys: String, CodingKey { case sha256, size, contentType = "content_type", contentEncoding = "content_encoding" }
    }

    struct Ink: Decodable { var format: String; var points: Int32; var strokes: Int32 }
    struct PNG: Decodable { var sha256: String; var width: Int32; var height: Int32 }
    struct Uploader: Decodable {
        var keyID: UUID
        enum CodingKeys: String, CodingKey { case keyID = "key_id" }
    }

    /// A render option's value, by kind (the facts encode options by value).
    enum OptionValue: Decodable {
        case bool(Bool), number(Double), string(String), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null; return }
            if let bool = try? container.decode(Bool.self) { self = .bool(bool); return }
            if let number = try? container.decode(Double.self) { self = .number(number); return }
            self = .string(try container.decode(String.self))
        }
    }

    struct Proof: Decodable {
        var proofID: UUID
        var reference: String
        var signer: Signer
        var capturedAtMicros: Int64
        var capturedAtOffsetMinutes: Int32
        var capturedAtAsSent: String
        var receivedAtMicros: Int64
        var location: Location?
        var distanceToDestinationMeters: Double?
        var geofenceRadiusMeters: Double
        var flags: [String]
        var device: Device
        var original: Original
        var ink: Ink
        var png: PNG
        var renderOptions: [String: OptionValue]
        var algorithmVersion: String
        var uploadedBy: Uploader

        enum CodingKeys: String, CodingKey {
            case reference, signer, location, flags, device, original, ink, png
            case proofID = "proof_id", capturedAtMicros = "captured_at_us", capturedAtOffsetMinutes = "captured_at_offset_min"
            case capturedAtAsSent = "captured_at_as_sent", receivedAtMicros = "received_at_us"
            case distanceToDestinationMeters = "distance_to_destination_m", geofenceRadiusMeters = "geofence_radius_m"
            case renderOptions = "render_options", algorithmVersion = "algorithm_version", uploadedBy = "uploaded_by"
        }
    }

    /// A device-signed upload's key and signature (base64), with the key's public key.
    struct DeviceSignatureMember: Decodable {
        var keyID: String
        var publicKey: String
        var signature: String
        enum CodingKeys: String, CodingKey { case signature, keyID = "key_id", publicKey = "public_key" }
    }

    var delivery: Delivery
    var files: [String: File]
    var proof: Proof
    var deviceSignature: DeviceSignatureMember?

    enum CodingKeys: String, CodingKey {
        case delivery, files, proof
        case deviceSignature = "device_signature"
    }

    /// Parses `bytes`; the error says what is wrong.
    static func parse(_ bytes: [UInt8]) throws -> BundleProofReading {
        try JSONDecoder().decode(BundleProofReading.self, from: Data(bytes))
    }

    /// The facts this document states.
    var facts: ProofFacts {
        ProofFacts(proofID: proof.proofID, reference: proof.reference, signerName: proof.signer.name,
                   capturedAtMicros: proof.capturedAtMicros, capturedAtOffsetMinutes: proof.capturedAtOffsetMinutes,
                   capturedAtText: proof.capturedAtAsSent, receivedAtMicros: proof.receivedAtMicros, locationLat: proof.location?.lat,
                   locationLon: proof.location?.lon, locationAccuracyMeters: proof.location?.accuracyM,
                   distanceToDestinationMeters: proof.distanceToDestinationMeters, geofenceRadiusMeters: proof.geofenceRadiusMeters,
                   flags: proof.flags, device: DeviceFacts(id: proof.device.id, model: proof.device.model, os: proof.device.os,
                                                           app: proof.device.app),
                   bodyContentType: proof.original.contentType, bodyContentEncoding: proof.original.contentEncoding,
                   inkFormat: proof.ink.format, pointCount: proof.ink.points, strokeCount: proof.ink.strokes, pngWidth: proof.png.width,
                   pngHeight: proof.png.height, renderOptionsJSON: renderOptionsJSON, algorithmVersion: proof.algorithmVersion,
                   uploadedBy: proof.uploadedBy.keyID)
    }

    /// The render options written back as JSON (by value: the digest encodes values, not text).
    var renderOptionsJSON: String {
        var json = CanonicalJSONWriter(capacity: 256)
        json.beginObject()
        for name in proof.renderOptions.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            json.key(name)
            switch proof.renderOptions[name]! {
            case .bool(let value): json.bool(value)
            case .number(let value): json.number(value)
            case .string(let value): json.string(value)
            case .null: json.null()
            }
        }
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
