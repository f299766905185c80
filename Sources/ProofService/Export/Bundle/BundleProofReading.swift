import Foundation
import ProofStore

/// A version 3 `metadata.json` read back: what the verifier needs to recompute the proof facts
/// digest (`metadata_sha256`) and to check the folder's other files. Read strictly by
/// ``BundleJSONParser`` (not `JSONDecoder`, which was the verifier's largest cost): a missing or
/// mistyped member is a failure naming the member, never a crash. Members it does not use are
/// ignored, as before.
struct BundleProofReading: Sendable {
    struct Delivery: Sendable {
        var reference: String
    }

    struct File: Sendable {
        var bytes: Int
        var sha256: String
    }

    struct Signer: Sendable { var name: String }
    struct Location: Sendable {
        var lat: Double
        var lon: Double
        var accuracyM: Double?
    }

    struct Device: Sendable { var id, model, os, app: String? }
    struct Original: Sendable {
        var contentType: String
        var contentEncoding: String?
        var sha256: String
        var size: Int
    }

    struct Ink: Sendable { var format: String; var points: Int32; var strokes: Int32 }
    struct PNG: Sendable { var sha256: String; var width: Int32; var height: Int32 }
    struct Uploader: Sendable {
        var keyID: UUID
    }

    /// A render option's value, by kind (the facts encode options by value).
    enum OptionValue: Sendable {
        case bool(Bool), number(Double), string(String), null
    }

    struct Proof: Sendable {
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
    }

    /// A device-signed upload's key and signature (base64), with the key's public key.
    struct DeviceSignatureMember: Sendable {
        var keyID: String
        var publicKey: String
        var signature: String
    }

    var delivery: Delivery
    var files: [String: File]
    var proof: Proof
    var deviceSignature: DeviceSignatureMember?

    /// Parses `bytes`; the error says what is wrong.
    static func parse(_ bytes: [UInt8]) throws(BundleJSONError) -> BundleProofReading {
        let root = try BundleJSONParser.parse(bytes)
        _ = try root.members("the document")
        var files: [String: File] = [:]
        for (name, file) in try root.object("files").members("files") {
            files[name] = File(bytes: try file.int("bytes"), sha256: try file.string("sha256"))
        }
        let signed = try root.optionalObject("device_signature").map { (member) throws(BundleJSONError) in
            DeviceSignatureMember(keyID: try member.string("key_id"), publicKey: try member.string("public_key"),
                                  signature: try member.string("signature"))
        }
        return BundleProofReading(delivery: Delivery(reference: try root.object("delivery").string("reference")), files: files,
                                  proof: try proof(root.object("proof")), deviceSignature: signed)
    }

    private static func proof(_ proof: BundleJSONValue) throws(BundleJSONError) -> Proof {
        let location = try proof.optionalObject("location")
        let device = try proof.object("device"), original = try proof.object("original"), ink = try proof.object("ink")
        let png = try proof.object("png")
        var options: [String: OptionValue] = [:]
        for (name, value) in try proof.object("render_options").members("render_options") {
            switch value {
            case .null: options[name] = .null
            case .bool(let flag): options[name] = .bool(flag)
            case .number(let text):
                guard let number = Double(text), number.isFinite else { throw BundleJSONError("render_options.\(name) is out of range") }
                options[name] = .number(number)
            case .string(let text): options[name] = .string(text)
            case .object, .array: throw BundleJSONError("render_options.\(name) is not a bool, number, string or null")
            }
        }
        return Proof(
            proofID: try uuid(proof.string("proof_id"), "proof_id"), reference: try proof.string("reference"),
            signer: Signer(name: try proof.object("signer").string("name")), capturedAtMicros: try proof.int64("captured_at_us"),
            capturedAtOffsetMinutes: try proof.int32("captured_at_offset_min"), capturedAtAsSent: try proof.string("captured_at_as_sent"),
            receivedAtMicros: try proof.int64("received_at_us"),
            location: try location.map { (value) throws(BundleJSONError) in
                Location(lat: try value.double("lat"), lon: try value.double("lon"), accuracyM: try value.optionalDouble("accuracy_m"))
            },
            distanceToDestinationMeters: try proof.optionalDouble("distance_to_destination_m"),
            geofenceRadiusMeters: try proof.double("geofence_radius_m"), flags: try proof.strings("flags"),
            device: Device(id: try device.optionalString("id"), model: try device.optionalString("model"), os: try device.optionalString("os"),
                           app: try device.optionalString("app")),
            original: Original(contentType: try original.string("content_type"), contentEncoding: try original.optionalString("content_encoding"),
                               sha256: try original.string("sha256"), size: try original.int("size")),
            ink: Ink(format: try ink.string("format"), points: try ink.int32("points"), strokes: try ink.int32("strokes")),
            png: PNG(sha256: try png.string("sha256"), width: try png.int32("width"), height: try png.int32("height")),
            renderOptions: options, algorithmVersion: try proof.string("algorithm_version"),
            uploadedBy: Uploader(keyID: try uuid(proof.object("uploaded_by").string("key_id"), "uploaded_by.key_id")))
    }

    private static func uuid(_ text: String, _ name: String) throws(BundleJSONError) -> UUID {
        guard let id = UUID(text: text) else { throw BundleJSONError("\(name) is not a UUID") }
        return id
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
