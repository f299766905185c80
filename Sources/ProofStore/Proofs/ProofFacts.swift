import Cryptography
import Foundation
import Postgres

/// Everything a stored proof says besides its original body, PNG and ink (which have digests of
/// their own): who signed, when and where, on which device, what the server concluded, how it
/// rendered, who uploaded it — and under which delivery. Its ``digest`` is bound into the proof's
/// `proof_recorded` event as `metadata_sha256`, so changing any of these columns afterwards (or
/// moving the proof to another delivery) is found by verification. The encoding is in docs/audit.md.
public struct ProofFacts: Sendable, Equatable {
    /// The tag that starts the encoding.
    public static let tag = "countersign.proof-facts/v1"

    public var proofID: UUID
    /// The reference of the delivery the proof belongs to (through `proofs.delivery_id`).
    public var reference: String
    public var signerName: String
    /// `captured_at`, microseconds since the Unix epoch, as stored.
    public var capturedAtMicros: Int64
    public var capturedAtOffsetMinutes: Int32
    public var capturedAtText: String
    /// `received_at`, microseconds since the Unix epoch, as stored.
    public var receivedAtMicros: Int64
    public var locationLat: Double?
    public var locationLon: Double?
    public var locationAccuracyMeters: Double?
    public var distanceToDestinationMeters: Double?
    public var geofenceRadiusMeters: Double
    /// In stored order.
    public var flags: [String]
    public var device: DeviceFacts
    public var bodyContentType: String
    public var bodyContentEncoding: String?
    public var inkFormat: String
    public var pointCount: Int32
    public var strokeCount: Int32
    public var pngWidth: Int32
    public var pngHeight: Int32
    /// The render options, a JSON object (as written, or as `render_options` gives it back:
    /// ``RenderOptionsDigest`` encodes their values, not their text).
    public var renderOptionsJSON: String
    public var algorithmVersion: String
    public var uploadedBy: UUID

    /// The facts of `proof`, about to be stored for the delivery `reference`.
    public init(_ proof: NewProof, reference: String) {
        proofID = proof.id
        self.reference = reference
        signerName = proof.capture.signerName
        capturedAtMicros = PostgresEpoch.unixMicros(proof.capture.capturedAt.date)
        capturedAtOffsetMinutes = Int32(proof.capture.capturedAt.offsetMinutes)
        capturedAtText = proof.capture.capturedAt.text
        receivedAtMicros = PostgresEpoch.unixMicros(proof.body.receivedAt)
        locationLat = proof.capture.location?.point.lat
        locationLon = proof.capture.location?.point.lon
        locationAccuracyMeters = proof.capture.location?.accuracyMeters
        distanceToDestinationMeters = proof.assessment.distanceToDestinationMeters
        geofenceRadiusMeters = proof.assessment.geofenceRadiusMeters
        flags = proof.assessment.flags.map(\.rawValue)
        device = proof.capture.device
        bodyContentType = proof.body.contentType
        bodyContentEncoding = proof.body.contentEncoding
        inkFormat = proof.rendering.inkFormat
        pointCount = Int32(clamping: proof.rendering.pointCount)
        strokeCount = Int32(clamping: proof.rendering.strokeCount)
        pngWidth = Int32(clamping: proof.rendering.pngWidth)
        pngHeight = Int32(clamping: proof.rendering.pngHeight)
        renderOptionsJSON = proof.rendering.renderOptionsJSON
        algorithmVersion = proof.rendering.algorithmVersion
        uploadedBy = proof.uploadedBy
    }

    /// The facts from their parts (an export bundle's `metadata.json`, read back by its verifier).
    public init(proofID: UUID, reference: String, signerName: String, capturedAtMicros: Int64, capturedAtOffsetMinutes: Int32,
                capturedAtText: String, receivedAtMicros: Int64, locationLat: Double?, locationLon: Double?,
                locationAccuracyMeters: Double?, distanceToDestinationMeters: Double?, geofenceRadiusMeters: Double, flags: [String],
                device: DeviceFacts, bodyContentType: String, bodyContentEncoding: String?, inkFormat: String, pointCount: Int32,
                strokeCount: Int32, pngWidth: Int32, pngHeight: Int32, renderOptionsJSON: String, algorithmVersion: String,
                uploadedBy: UUID) {
        self.proofID = proofID
        self.reference = reference
        self.signerName = signerName
        self.capturedAtMicros = capturedAtMicros
        self.capturedAtOffsetMinutes = capturedAtOffsetMinutes
        self.capturedAtText = capturedAtText
        self.receivedAtMicros = receivedAtMicros
        self.locationLat = locationLat
        self.locationLon = locationLon
        self.locationAccuracyMeters = locationAccuracyMeters
        self.distanceToDestinationMeters = distanceToDestinationMeters
        self.geofenceRadiusMeters = geofenceRadiusMeters
        self.flags = flags
        self.device = device
        self.bodyContentType = bodyContentType
        self.bodyContentEncoding = bodyContentEncoding
        self.inkFormat = inkFormat
        self.pointCount = pointCount
        self.strokeCount = strokeCount
        self.pngWidth = pngWidth
        self.pngHeight = pngHeight
        self.renderOptionsJSON = renderOptionsJSON
        self.algorithmVersion = algorithmVersion
        self.uploadedBy = uploadedBy
    }

    /// The facts as read back from a stored row (``ProofFacts/columns``).
    init(row: PostgresRow) throws {
        proofID = try row.decode("id")
        reference = try row.decode("reference")
        signerName = try row.decode("signer_name")
        capturedAtMicros = try row.decode("captured_at_us")
        capturedAtOffsetMinutes = try row.decode("captured_at_offset_min")
        capturedAtText = try row.decode("captured_at_text")
        receivedAtMicros = try row.decode("received_at_us")
        locationLat = try row.decode("location_lat")
        locationLon = try row.decode("location_lon")
        locationAccuracyMeters = try row.decode("location_accuracy_m")
        distanceToDestinationMeters = try row.decode("distance_to_destination_m")
        geofenceRadiusMeters = try row.decode("geofence_radius_m")
        flags = (try row.decode(String.self, "flags_text")).split(separator: ",").map(String.init)
        device = DeviceFacts(id: try row.decode("device_id"), model: try row.decode("device_model"), os: try row.decode("device_os"),
                             app: try row.decode("device_app"))
        bodyContentType = try row.decode("body_content_type")
        bodyContentEncoding = try row.decode("body_content_encoding")
        inkFormat = try row.decode("ink_format")
        pointCount = try row.decode("point_count")
        strokeCount = try row.decode("stroke_count")
        pngWidth = try row.decode("png_width")
        pngHeight = try row.decode("png_height")
        renderOptionsJSON = try row.decode("render_options_text")
        algorithmVersion = try row.decode("algorithm_version")
        uploadedBy = try row.decode("uploaded_by")
    }

    /// The select list that ``init(row:)`` reads, for a query over `proofs p JOIN deliveries d`.
    static let columns = """
        p.id, d.reference::text AS reference, coalesce(p.signer_name, '')::text AS signer_name, (extract(epoch FROM p.captured_at) * 1000000)::int8 AS captured_at_us,
        p.captured_at_offset_min::int4 AS captured_at_offset_min, p.captured_at_text::text AS captured_at_text,
        (extract(epoch FROM p.received_at) * 1000000)::int8 AS received_at_us,
        p.location_lat::float8 AS location_lat, p.location_lon::float8 AS location_lon, p.location_accuracy_m::float8 AS location_accuracy_m,
        p.distance_to_destination_m::float8 AS distance_to_destination_m, p.geofence_radius_m::float8 AS geofence_radius_m,
        array_to_string(p.flags, ',') AS flags_text, p.device_id::text AS device_id, p.device_model::text AS device_model,
        p.device_os::text AS device_os, p.device_app::text AS device_app, p.body_content_type::text AS body_content_type,
        p.body_content_encoding::text AS body_content_encoding, p.ink_format::text AS ink_format, p.point_count::int4 AS point_count,
        p.stroke_count::int4 AS stroke_count, p.png_width::int4 AS png_width, p.png_height::int4 AS png_height,
        p.render_options::text AS render_options_text, p.algorithm_version::text AS algorithm_version, p.uploaded_by
        """

    /// SHA-256 of the encoding in docs/audit.md ("Proof facts").
    public var digest: [UInt8] {
        var out = CanonicalEncoder(capacity: 1024)
        out.text(Self.tag)
        out.text(proofID.lowercasedText)
        out.text(reference)
        out.text(signerName)
        out.int64(capturedAtMicros)
        out.int32(capturedAtOffsetMinutes)
        out.text(capturedAtText)
        out.int64(receivedAtMicros)
        out.number(locationLat)
        out.number(locationLon)
        out.number(locationAccuracyMeters)
        out.number(distanceToDestinationMeters)
        out.number(geofenceRadiusMeters)
        out.text(flags.joined(separator: ","))
        out.text(device.id)
        out.text(device.model)
        out.text(device.os)
        out.text(device.app)
        out.text(bodyContentType)
        out.text(bodyContentEncoding)
        out.text(inkFormat)
        out.int32(pointCount)
        out.int32(strokeCount)
        out.int32(pngWidth)
        out.int32(pngHeight)
        out.raw(RenderOptionsDigest.canonical(renderOptionsJSON))
        out.text(algorithmVersion)
        out.text(uploadedBy.lowercasedText)
        return SHA256.hash(out.bytes)
    }
}
