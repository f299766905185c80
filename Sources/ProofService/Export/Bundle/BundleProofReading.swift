import Foundation
import ProofStore

/// A version 3 `metadata.json` read back: what the verifier checks the proof's folder and event
/// against, and the digest of the proof facts it states (`metadata_sha256`). Read strictly in one
/// pass by ``BundleJSONParser/read(_:_:)``, without a tree (which cost more than the reading
/// itself): a missing or mistyped member is a failure naming the member, never a crash. Members it
/// does not use are skipped, still checked as JSON.
struct BundleProofReading: Sendable {
    /// A file `files` lists.
    struct File: Sendable {
        var bytes: Int
        /// Nil when its `sha256` is not 64 hex digits.
        var sha256: Digest32?
        /// `"omitted": true`: the exporter left the file out (an export without the raw dynamics);
        /// `bytes` and `sha256` still describe it.
        var omitted = false
    }

    /// A device-signed upload's key and signature (base64), with the key's public key.
    struct DeviceSignatureMember: Sendable {
        var keyID: String
        var publicKey: String
        var signature: String
    }

    /// `delivery.reference`.
    var deliveryReference: String
    /// The members of `files`, in document order.
    var files: [(name: String, file: File)]
    /// `proof.proof_id`.
    var proofID: UUID
    /// `proof.reference`.
    var reference: String
    /// `proof.original.sha256` (nil when not 64 hex digits) and `proof.original.size`.
    var originalSHA256: Digest32?
    var originalSize: Int
    /// `proof.png.sha256` (nil when not 64 hex digits).
    var pngSHA256: Digest32?
    var deviceSignature: DeviceSignatureMember?
    /// `commitment_salt`: the delivery's salt, for an event that binds `metadata_commitment`.
    var commitmentSalt: CommitmentSalt?
    /// SHA-256 of the proof facts the document states (``ProofStore/ProofFacts/digest``).
    var factsDigest: Digest32

    /// The file `files` lists as `name`.
    func file(_ name: String) -> File? { files.first { $0.name == name }?.file }

    /// Parses `bytes`; the error says what is wrong.
    static func parse(_ bytes: some Collection<UInt8>) throws(BundleJSONError) -> BundleProofReading {
        try BundleJSONParser.read(bytes) { (json) throws(BundleJSONError) in
            var reference: String?, files: [(name: String, file: File)]?, proof: Proof?
            var signed: DeviceSignatureMember?, salt: CommitmentSalt?
            try json.readObject("the document", depth: 1) { (json, name) throws(BundleJSONError) in
                if json.token(name, is: "delivery") {
                    reference = try member(of: &json, depth: 2, "delivery", "reference") { (json) throws(BundleJSONError) in
                        try json.readString("reference")
                    }
                } else if json.token(name, is: "files") {
                    files = try readFiles(&json)
                } else if json.token(name, is: "proof") {
                    proof = try Proof.read(&json)
                } else if json.token(name, is: "device_signature") {
                    signed = try readDeviceSignature(&json)
                } else if json.token(name, is: "commitment_salt") {
                    guard let read = CommitmentSalt(hex: try json.readString("commitment_salt")) else {
                        throw BundleJSONError("commitment_salt is not 64 hex digits")
                    }
                    salt = read
                } else {
                    try json.skipValue(depth: 1)
                }
            }
            guard let files else { throw BundleJSONError("files is missing") }
            guard let reference else { throw BundleJSONError("delivery is missing") }
            guard let proof else { throw BundleJSONError("proof is missing") }
            return BundleProofReading(deliveryReference: reference, files: files, proofID: proof.facts.proofID, reference: proof.facts.reference,
                                      originalSHA256: proof.originalSHA256, originalSize: proof.originalSize, pngSHA256: proof.pngSHA256,
                                      deviceSignature: signed, commitmentSalt: salt,
                                      factsDigest: Digest32(proof.facts.digest))
        }
    }

    private static func readFiles(_ json: inout BundleJSONParser) throws(BundleJSONError) -> [(name: String, file: File)] {
        var files: [(name: String, file: File)] = []
        files.reserveCapacity(4)
        try json.readObject("files", depth: 2) { (json, name) throws(BundleJSONError) in
            var bytes: Int?, sha256: Digest32??, omitted = false
            try json.readObject("files", depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "bytes") {
                    bytes = Int(try json.readInt64("bytes"))
                } else if json.token(member, is: "omitted") {
                    omitted = try json.readBool("omitted")
                } else if json.token(member, is: "sha256") {
                    sha256 = .some(try json.readDigest("sha256"))
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            guard let bytes else { throw BundleJSONError("bytes is missing") }
            guard let sha256 else { throw BundleJSONError("sha256 is missing") }
            files.append((name: json.text(name), file: File(bytes: bytes, sha256: sha256, omitted: omitted)))
        }
        return files
    }

    private static func readDeviceSignature(_ json: inout BundleJSONParser) throws(BundleJSONError) -> DeviceSignatureMember? {
        if try json.readNull() { return nil }
        guard json.atObject else { throw BundleJSONError("device_signature is not an object or null") }
        var keyID: String?, publicKey: String?, signature: String?
        try json.forEachMember(depth: 2) { (json, name) throws(BundleJSONError) in
            if json.token(name, is: "key_id") {
                keyID = try json.readString("key_id")
            } else if json.token(name, is: "public_key") {
                publicKey = try json.readString("public_key")
            } else if json.token(name, is: "signature") {
                signature = try json.readString("signature")
            } else {
                try json.skipValue(depth: 2)
            }
        }
        guard let keyID else { throw BundleJSONError("key_id is missing") }
        guard let publicKey else { throw BundleJSONError("public_key is missing") }
        guard let signature else { throw BundleJSONError("signature is missing") }
        return DeviceSignatureMember(keyID: keyID, publicKey: publicKey, signature: signature)
    }

    /// The one member `wanted` of the object `name` (required), read by `read`; the others skipped.
    fileprivate static func member<Value>(of json: inout BundleJSONParser, depth: Int, _ name: String, _ wanted: StaticString,
                                          _ read: (inout BundleJSONParser) throws(BundleJSONError) -> Value) throws(BundleJSONError) -> Value {
        var value: Value?
        try json.readObject(name, depth: depth) { (json, member) throws(BundleJSONError) in
            if json.token(member, is: wanted) { value = try read(&json) } else { try json.skipValue(depth: depth) }
        }
        guard let value else { throw BundleJSONError("\(wanted) is missing") }
        return value
    }
}

/// The `proof` member of a `metadata.json`, read into the proof facts it states.
private struct Proof {
    var facts: ProofFacts
    var originalSHA256: Digest32?
    var originalSize: Int
    var pngSHA256: Digest32?

    /// The members, each once (the parser refuses a name twice); the required ones checked after.
    private struct Members {
        var proofID: UUID?, reference: String?, signerName: String?, capturedAtMicros: Int64?, capturedAtOffsetMinutes: Int32?
        var capturedAtAsSent: String?, receivedAtMicros: Int64?
        var location: (lat: Double, lon: Double, accuracy: Double?)?
        var distance: Double?, geofenceRadius: Double?, flags: [String]?, device: DeviceFacts?
        var original: (contentType: String, contentEncoding: String?, sha256: Digest32?, size: Int)?
        var ink: (format: String, points: Int32, strokes: Int32)?
        var png: (sha256: Digest32?, width: Int32, height: Int32)?
        var renderOptionsText: String?
        var algorithmVersion: String?, uploadedBy: UUID?
    }

    static func read(_ json: inout BundleJSONParser) throws(BundleJSONError) -> Proof {
        var found = Members()
        try json.readObject("proof", depth: 2) { (json, name) throws(BundleJSONError) in
            try member(name, of: &json, into: &found)
        }
        let original = try required(found.original, "original"), ink = try required(found.ink, "ink"), png = try required(found.png, "png")
        let facts = ProofFacts(
            proofID: try required(found.proofID, "proof_id"), reference: try required(found.reference, "reference"),
            signerName: try required(found.signerName, "signer"), capturedAtMicros: try required(found.capturedAtMicros, "captured_at_us"),
            capturedAtOffsetMinutes: try required(found.capturedAtOffsetMinutes, "captured_at_offset_min"),
            capturedAtText: try required(found.capturedAtAsSent, "captured_at_as_sent"),
            receivedAtMicros: try required(found.receivedAtMicros, "received_at_us"), locationLat: found.location?.lat,
            locationLon: found.location?.lon, locationAccuracyMeters: found.location?.accuracy, distanceToDestinationMeters: found.distance,
            geofenceRadiusMeters: try required(found.geofenceRadius, "geofence_radius_m"), flags: try required(found.flags, "flags"),
            device: try required(found.device, "device"), bodyContentType: original.contentType, bodyContentEncoding: original.contentEncoding,
            inkFormat: ink.format, pointCount: ink.points, strokeCount: ink.strokes, pngWidth: png.width, pngHeight: png.height,
            renderOptionsJSON: try required(found.renderOptionsText, "render_options"),
            algorithmVersion: try required(found.algorithmVersion, "algorithm_version"), uploadedBy: try required(found.uploadedBy, "uploaded_by"))
        return Proof(facts: facts, originalSHA256: original.sha256, originalSize: original.size,
                     pngSHA256: png.sha256)
    }

    /// Reads the member `name` of `proof` into `found` (or skips it).
    private static func member(_ name: BundleJSONParser.Token, of json: inout BundleJSONParser, into found: inout Members) throws(BundleJSONError) {
        if json.token(name, is: "proof_id") {
            found.proofID = try json.readUUID("proof_id")
        } else if json.token(name, is: "reference") {
            found.reference = try json.readString("reference")
        } else if json.token(name, is: "signer") {
            found.signerName = try BundleProofReading.member(of: &json, depth: 3, "signer", "name") { (json) throws(BundleJSONError) in
                try json.readString("name")
            }
        } else if json.token(name, is: "captured_at_us") {
            found.capturedAtMicros = try json.readInt64("captured_at_us")
        } else if json.token(name, is: "captured_at_offset_min") {
            found.capturedAtOffsetMinutes = try json.readInt32("captured_at_offset_min")
        } else if json.token(name, is: "captured_at_as_sent") {
            found.capturedAtAsSent = try json.readString("captured_at_as_sent")
        } else if json.token(name, is: "received_at_us") {
            found.receivedAtMicros = try json.readInt64("received_at_us")
        } else if json.token(name, is: "location") {
            if try json.readNull() { return }
            guard json.atObject else { throw BundleJSONError("location is not an object or null") }
            var lat: Double?, lon: Double?, accuracy: Double?
            try json.forEachMember(depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "lat") {
                    lat = try json.readOptionalDouble("lat")
                } else if json.token(member, is: "lon") {
                    lon = try json.readOptionalDouble("lon")
                } else if json.token(member, is: "accuracy_m") {
                    accuracy = try json.readOptionalDouble("accuracy_m")
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            guard let lat else { throw BundleJSONError("lat is not a number") }
            guard let lon else { throw BundleJSONError("lon is not a number") }
            found.location = (lat, lon, accuracy)
        } else if json.token(name, is: "distance_to_destination_m") {
            found.distance = try json.readOptionalDouble("distance_to_destination_m")
        } else if json.token(name, is: "geofence_radius_m") {
            found.geofenceRadius = try json.readDouble("geofence_radius_m")
        } else if json.token(name, is: "flags") {
            guard json.next == UInt8(ascii: "[") else { throw BundleJSONError("flags is not an array") }
            var flags: [String] = []
            try json.forEachElement(depth: 3) { (json) throws(BundleJSONError) in
                guard json.next == UInt8(ascii: "\"") else { throw BundleJSONError("flags holds a value that is not a string") }
                flags.append(try json.readString("flags"))
            }
            found.flags = flags
        } else if json.token(name, is: "device") {
            var device = DeviceFacts()
            try json.readObject("device", depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "id") {
                    device.id = try json.readOptionalString("id")
                } else if json.token(member, is: "model") {
                    device.model = try json.readOptionalString("model")
                } else if json.token(member, is: "os") {
                    device.os = try json.readOptionalString("os")
                } else if json.token(member, is: "app") {
                    device.app = try json.readOptionalString("app")
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            found.device = device
        } else if json.token(name, is: "original") {
            var contentType: String?, contentEncoding: String?, sha256: Digest32??, size: Int?
            try json.readObject("original", depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "content_type") {
                    contentType = try json.readString("content_type")
                } else if json.token(member, is: "content_encoding") {
                    contentEncoding = try json.readOptionalString("content_encoding")
                } else if json.token(member, is: "sha256") {
                    sha256 = .some(try json.readDigest("sha256"))
                } else if json.token(member, is: "size") {
                    size = Int(try json.readInt64("size"))
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            found.original = (try required(contentType, "content_type"), contentEncoding, try required(sha256, "sha256"), try required(size, "size"))
        } else if json.token(name, is: "ink") {
            var format: String?, points: Int32?, strokes: Int32?
            try json.readObject("ink", depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "format") {
                    format = try json.readString("format")
                } else if json.token(member, is: "points") {
                    points = try json.readInt32("points")
                } else if json.token(member, is: "strokes") {
                    strokes = try json.readInt32("strokes")
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            found.ink = (try required(format, "format"), try required(points, "points"), try required(strokes, "strokes"))
        } else if json.token(name, is: "png") {
            var sha256: Digest32??, width: Int32?, height: Int32?
            try json.readObject("png", depth: 3) { (json, member) throws(BundleJSONError) in
                if json.token(member, is: "sha256") {
                    sha256 = .some(try json.readDigest("sha256"))
                } else if json.token(member, is: "width") {
                    width = try json.readInt32("width")
                } else if json.token(member, is: "height") {
                    height = try json.readInt32("height")
                } else {
                    try json.skipValue(depth: 3)
                }
            }
            found.png = (try required(sha256, "sha256"), try required(width, "width"), try required(height, "height"))
        } else if json.token(name, is: "render_options") {
            // Kept as the text it stands as: the facts encode the options by value, read from that
            // text as the server reads the stored options (``RenderOptionsDigest``). Here each
            // value is only checked to be a bool, number, string or null.
            let start = json.position
            try json.readObject("render_options", depth: 3) { (json, member) throws(BundleJSONError) in
                switch json.next {
                case UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "\""): try json.skipValue(depth: 3)
                case _ where json.atNumber: _ = try json.readDouble("render_options.\(json.text(member))")
                default: throw BundleJSONError("render_options.\(json.text(member)) is not a bool, number, string or null")
                }
            }
            found.renderOptionsText = json.text(from: start)
        } else if json.token(name, is: "algorithm_version") {
            found.algorithmVersion = try json.readString("algorithm_version")
        } else if json.token(name, is: "uploaded_by") {
            found.uploadedBy = try BundleProofReading.member(of: &json, depth: 3, "uploaded_by", "key_id") { (json) throws(BundleJSONError) in
                try json.readUUID("uploaded_by.key_id")
            }
        } else {
            try json.skipValue(depth: 2)
        }
    }
}
