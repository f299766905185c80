import Foundation
import ProofStore
import SignatureKit
import SignatureRender

/// A parsed and validated `POST /v1/deliveries/{reference}/proof` body.
///
/// The signature's points never go through Foundation's `JSONDecoder`: the `"ink"` or
/// `"signature_pad"` member is located with ``JSONMemberLocator``, handed to ``InkParser`` as a
/// byte slice, and blanked out (as `0`) before the small envelope is decoded.
public struct ProofUpload: Sendable {
    public var signerName: String
    public var capturedAt: RFC3339Timestamp
    public var location: CaptureLocation?
    public var device: DeviceFacts
    /// `ink`, `signature_pad` or `inkml`.
    public var inkFormat: String
    public var ink: InkDocument

    struct Envelope: Decodable {
        struct Signer: Decodable { var name: String? }
        struct Location: Decodable {
            var lat: Double?
            var lon: Double?
            var accuracyM: Double?
            enum CodingKeys: String, CodingKey {
                case lat, lon
                case accuracyM = "accuracy_m"
            }
        }
        struct Device: Decodable {
            var id: String?
            var model: String?
            var os: String?
            var app: String?
        }
        struct Canvas: Decodable {
            var width: Double?
            var height: Double?
        }
        var signer: Signer?
        var capturedAt: String?
        var location: Location?
        var device: Device?
        var canvas: Canvas?
        var inkml: String?
        enum CodingKeys: String, CodingKey {
            case signer, location, device, canvas, inkml
            case capturedAt = "captured_at"
        }
    }

    /// Parses `body`; every refusal is a 400 (not JSON) or 422 (with field errors) ``ServiceError``.
    public static func parse(_ body: [UInt8], parser: InkParser) throws(ServiceError) -> ProofUpload {
        let inkRange: Range<Int>?
        let padRange: Range<Int>?
        do {
            let ranges = try JSONMemberLocator.ranges(ofMembers: ["ink", "signature_pad"], in: body,
                                                      maxDepth: parser.limits.maxNestingDepth)
            (inkRange, padRange) = (ranges[0], ranges[1])
        } catch {
            if error.code == .duplicateField { throw JSONEnvelopeDecoder.duplicateMember(error) }
            throw ServiceError(.badRequest, code: error.code.rawValue, detail: "The body is not a JSON object: \(error.message)")
        }
        // The envelope without the ink: each ink value becomes `0` (the later one first, so the
        // earlier range stays valid), and Foundation's decoder never walks the points.
        var envelopeBytes = body
        for range in [inkRange, padRange].compactMap({ $0 }).sorted(by: { $0.lowerBound > $1.lowerBound }) {
            envelopeBytes.replaceSubrange(range, with: CollectionOfOne(0x30))
        }
        let envelope = try JSONEnvelopeDecoder.decode(Envelope.self, from: envelopeBytes)

        var errors: [FieldError] = []
        let name = envelope.signer?.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if envelope.signer?.name == nil {
            errors.append(.init(field: "/signer/name", message: "required", code: "missing_field"))
        } else {
            errors += TextRules.check(name, sent: envelope.signer?.name, at: "/signer/name", lengths: 1...200)
        }
        let capturedAt = CaptureRules.capturedAt(envelope.capturedAt, errors: &errors)
        var location: CaptureLocation?
        if let given = envelope.location {
            location = CaptureRules.location(lat: given.lat, lon: given.lon, accuracyM: given.accuracyM, errors: &errors)
        }
        var device = DeviceFacts()
        if let given = envelope.device {
            for (field, value) in [("id", given.id), ("model", given.model), ("os", given.os), ("app", given.app)] {
                if let value { errors += TextRules.check(value, at: "/device/\(field)", lengths: 0...200) }
            }
            device = DeviceFacts(id: given.id, model: given.model, os: given.os, app: given.app)
        }
        let carriers = [inkRange != nil ? "ink" : nil, padRange != nil ? "signature_pad" : nil, envelope.inkml != nil ? "inkml" : nil]
            .compactMap { $0 }
        if carriers.isEmpty {
            errors.append(.init(field: "/ink", message: "one of ink, signature_pad or inkml is required", code: "missing_field"))
        } else if carriers.count > 1 {
            errors.append(.init(field: "/" + carriers[1], message: "only one of ink, signature_pad or inkml may be given",
                                code: "conflicting_fields"))
        }
        var canvas: CanvasSize?
        if carriers == ["signature_pad"] {
            if let width = envelope.canvas?.width, let height = envelope.canvas?.height {
                canvas = CanvasSize(width: width, height: height)
            } else {
                errors.append(.init(field: "/canvas", message: "signature_pad data needs the canvas {width, height} in CSS px",
                                    code: "missing_field"))
            }
        }
        guard errors.isEmpty, let capturedAt, let format = carriers.first else {
            throw .validation("The proof is not valid.", errors: errors)
        }

        let ink: InkDocument
        do {
            switch format {
            case "ink": ink = try parser.parse(body[inkRange!], format: .ink)
            case "signature_pad": ink = try parser.parse(body[padRange!], format: .signaturePad(canvas: canvas!))
            default: ink = try parser.parse(Array((envelope.inkml ?? "").utf8), format: .inkml)
            }
        } catch {
            throw inkRefusal(error, member: format)
        }
        return ProofUpload(signerName: name, capturedAt: capturedAt, location: location, device: device,
                           inkFormat: format, ink: ink)
    }

    /// The engine's error as a 422 naming the member, stroke and point.
    static func inkRefusal(_ error: InkError, member: String) -> ServiceError {
        var field = "/" + member
        if member == "ink", let stroke = error.stroke {
            field += "/strokes/\(stroke)"
            if let point = error.point { field += "/\(point)" }
        } else if member == "signature_pad", let stroke = error.stroke {
            field += "/\(stroke)"
            if let point = error.point { field += "/points/\(point)" }
        }
        return ServiceError(.unprocessable, code: error.code.rawValue, title: "Invalid signature", detail: error.description,
                            errors: [.init(field: field, message: error.message, code: error.code.rawValue)])
    }

    /// The renderer's refusal of the layout (`output_too_large`, `invalid_layout`) as the same 422, naming the member.
    static func inkRefusal(_ error: RenderOptionsError, member: String) -> ServiceError {
        ServiceError(.unprocessable, code: error.code.rawValue, title: "Invalid signature", detail: error.description,
                     errors: [.init(field: "/" + member, message: error.message, code: error.code.rawValue)])
    }
}
