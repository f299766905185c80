import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import ProofService
import ProofStore

/// Proof upload (`POST .../proof`) and retrieval (metadata, PNG, SVG, original points): HTTP in
/// and out; the work is ``ProofIntake``'s and ``ProofReader``'s.
struct ProofRoutes: Sendable {
    let intake: ProofIntake
    let reader: ProofReader
    let idempotency: IdempotencyGate
    let bodyLimit: Int

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries/:reference/proof") { request, context in try await upload(request, context) }
        group.get("deliveries/:reference/proof") { _, context in try await metadata(context) }
        group.get("deliveries/:reference/proof/signature.png") { request, context in try await png(request, context) }
        group.get("deliveries/:reference/proof/signature.svg") { request, context in try await svg(request, context) }
        group.get("deliveries/:reference/proof/points") { request, context in try await points(request, context) }
    }

    // MARK: Upload

    func upload(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.uploadProof)
        let reference = try context.deliveryReference()
        let receivedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
        // A body declared heavy while heavy work may not start is refused unread (the answer closes the connection).
        let upload = try await RequestBodyReader.upload(request, limit: bodyLimit) { intake.earlyRefusal(contentLength: $0, actor: actor) }
        let claimedKey: String?
        switch try await idempotency.admit(request, actor: actor, encoding: upload.contentEncoding, bodySHA256: upload.sha256) {
        case .replay(let response): return response
        case .proceed(let key): claimedKey = key
        }
        defer { if let claimedKey { idempotency.finished(claimedKey, actor: actor) } }
        let location = DeliveryResource.path(reference) + "/proof"
        do {
            let answer = try await intake.accept(upload, reference: reference, actor: actor, receivedAt: receivedAt,
                                                 origin: context.auditOrigin(request), idempotencyKey: claimedKey,
                                                 deviceClaim: DeviceSignatureClaim(keyID: request.headers[.deviceKey],
                                                                                   signature: request.headers[.deviceSignature])) { recorded in
                IdempotentResponse(status: 201, contentType: "application/json", location: location, body: UploadResponse(recorded).json)
            }
            return JSONResponse.make(.created, bytes: answer.body, headers: [.location: location])
        } catch {
            if let claimedKey { await idempotency.release(claimedKey, actor: actor, logger: context.logger) }
            throw error
        }
    }

    // MARK: Retrieval

    func metadata(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readProof)
        let proof = try await reader.metadata(try context.deliveryReference())
        return JSONResponse.make(.ok, bytes: try ProofMetadataResource.encode(proof))
    }

    func png(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let reference = try context.deliveryReference()
        try await requireImageReader(context, reference: reference)
        let query = request.uri.queryParameters
        let sha256: [UInt8], bytes: [UInt8]?
        if query["width"] != nil || query["height"] != nil {
            let (width, height) = try Self.imageSize(query, maxSide: reader.maxPixelSide)
            let png = try await reader.resizedPNG(reference, width: width, height: height, for: context.actor?.keyID)
            (sha256, bytes) = (SHA256.hash(png), png)
        } else {
            // From memory when cached, else from the database (which leaves the bytes out when the ETag matches).
            (sha256, bytes) = try await reader.storedPNG(reference, ifNoneMatch: ImageResponse.firstETag(request))
        }
        try await reader.recordRead(.proofPNGRead, reference: reference, details: ["png_sha256": sha256.hexString],
                                    origin: context.auditOrigin(request))
        return ImageResponse.make(request, type: "image/png", sha256: sha256, body: bytes)
    }

    /// The `width` and `height` query parameters, each 1...`maxSide` when present.
    static func imageSize(_ query: Parameters, maxSide: Int) throws -> (width: Int?, height: Int?) {
        var size: [String: Int] = [:]
        var errors: [Problem.FieldError] = []
        for name in ["width", "height"] {
            guard let raw = query[Substring(name)] else { continue }
            if let value = Int(raw), (1...maxSide).contains(value) { size[name] = value } else {
                errors.append(.init(field: name, message: "an integer in 1...\(maxSide)", code: "invalid_size"))
            }
        }
        guard errors.isEmpty else { throw Problem.validation("The image size is not valid.", errors: errors) }
        return (size["width"], size["height"])
    }

    /// The proof readers, plus a courier asking for the PNG or SVG of a proof its own key uploaded
    /// (so the capture app can show what the server stored); anyone else gets the usual 401/403.
    func requireImageReader(_ context: AppRequestContext, reference: String) async throws {
        if let actor = context.actor, !Permission.readProof.roles.contains(actor.role), actor.role == .courier,
           try await reader.isUploader(actor.keyID, of: reference) {
            return
        }
        _ = try context.require(.readProof)
    }

    func svg(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let reference = try context.deliveryReference()
        try await requireImageReader(context, reference: reference)
        let svg = try await reader.svg(reference, for: context.actor?.keyID)
        let sha = SHA256.hash(svg)
        try await reader.recordRead(.proofSVGRead, reference: reference, details: ["svg_sha256": sha.hexString],
                                    origin: context.auditOrigin(request))
        return ImageResponse.make(request, type: "image/svg+xml", sha256: sha, body: svg)
    }

    /// The original body as uploaded, or the stored ink as InkML (`?format=inkml`). Both are
    /// downloads (`Content-Disposition: attachment`) of a fixed type: the uploader's own
    /// `Content-Type` is in the proof's metadata, never echoed, so no upload can choose how a
    /// browser treats the bytes.
    ///
    /// Auditors and admins only (``Permission/readPoints``); the optional `reason` query
    /// parameter (a case or ticket number, up to 200 characters) is recorded in the read's audit event.
    func points(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readPoints)
        let reference = try context.deliveryReference()
        let reason = try Self.accessReason(request.uri.queryParameters)
        if let format = request.uri.queryParameters["format"], format != "original" {
            guard format == "inkml" else {
                throw Problem.validation("Unknown format.", errors: [.init(field: "format", message: "original or inkml", code: "invalid_format")])
            }
            let inkml = try await reader.inkml(reference, for: context.actor?.keyID)
            try await reader.recordRead(.proofPointsRead, reference: reference, details: Self.withReason(["format": "inkml"], reason),
                                        origin: context.auditOrigin(request))
            return Response(status: .ok, headers: [.contentType: "application/inkml+xml", .contentDisposition: Self.attachment(reference, "inkml")],
                            body: .init(byteBuffer: ByteBuffer(bytes: inkml)))
        }
        let body = try await reader.original(reference)
        try await reader.recordRead(.proofPointsRead, reference: reference,
                                    details: Self.withReason(["format": "original", "points_sha256": body.sha256.hexString], reason),
                                    origin: context.auditOrigin(request))
        var headers: HTTPFields = [
            .contentType: "application/json", .contentDisposition: Self.attachment(reference, "json"),
            .eTag: "\"\(body.sha256.hexString)\"", .cacheControl: ImageResponse.immutable,
        ]
        var bytes = body.bytes
        if body.contentEncoding == "gzip" {
            if request.headers[.acceptEncoding]?.lowercased().contains("gzip") ?? false {
                headers[.contentEncoding] = "gzip"
            } else {
                do {
                    bytes = try GzipInflater.inflate(bytes, limit: 256 << 20)
                } catch {
                    throw Problem(.internalServerError, code: "stored_body_unreadable", detail: "The stored body could not be inflated.")
                }
            }
        }
        if ImageResponse.etagMatches(request, sha256: body.sha256) { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The longest `reason` a read of the dynamics may give, in code points.
    static let maxReasonLength = 200

    /// The `reason` query parameter: nil when absent; 422 `invalid_reason` when empty, longer than
    /// ``maxReasonLength`` or holding a control or bidi-override character. It is kept in the audit
    /// trail for good, so the docs ask for a case number rather than a person's name.
    static func accessReason(_ query: Parameters) throws -> String? {
        guard let raw = query["reason"].map(String.init) else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        let errors = TextRules.check(trimmed, sent: raw, at: "reason", lengths: 1...maxReasonLength)
        guard errors.isEmpty else {
            throw Problem.validation("The reason is not valid.",
                                     errors: errors.map { .init(field: "reason", message: $0.message, code: "invalid_reason") })
        }
        return trimmed
    }

    /// `details` with `reason` added when one was given.
    static func withReason(_ details: [String: String], _ reason: String?) -> [String: String] {
        guard let reason else { return details }
        return details.merging(["reason": reason]) { current, _ in current }
    }

    /// `attachment; filename="<reference>-points.<ext>"` (a reference needs no quoting: letters, digits and `._:-`).
    static func attachment(_ reference: String, _ ext: String) -> String {
        "attachment; filename=\"\(reference)-points.\(ext)\""
    }
}
