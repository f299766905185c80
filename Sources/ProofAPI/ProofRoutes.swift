import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Postgres
import ProofStore
import SignatureKit
import SignatureRender

/// Proof upload (`POST .../proof`) and retrieval (metadata, PNG, SVG, original points).
struct ProofRoutes: Sendable {
    let proofs: ProofRepository
    let deliveries: DeliveryRepository
    let audit: AuditLog
    let idempotency: IdempotencyRepository
    let policy: APIPolicy
    let bodyLimit: Int
    let parser: InkParser
    let renderOptions: RenderOptions
    /// `renderOptions` as stored with every proof (made once: it does not change while serving).
    let renderOptionsJSON: String
    let pngCache: StoredPNGCache

    init(database: PostgresClient, policy: APIPolicy, bodyLimit: Int) {
        self.proofs = ProofRepository(database: database)
        self.deliveries = DeliveryRepository(database: database)
        self.audit = AuditLog(database: database)
        self.idempotency = IdempotencyRepository(database: database)
        self.policy = policy
        self.bodyLimit = bodyLimit
        self.parser = InkParser()
        self.renderOptions = RenderOptions()
        self.renderOptionsJSON = StoredRenderOptions.json(renderOptions)
        self.pngCache = StoredPNGCache(byteLimit: policy.pngCacheBytes)
    }

    func register(on group: RouterGroup<AppRequestContext>) {
        group.post("deliveries/:reference/proof") { request, context in try await upload(request, context) }
        group.get("deliveries/:reference/proof") { _, context in try await metadata(context) }
        group.get("deliveries/:reference/proof/signature.png") { request, context in try await png(request, context) }
        group.get("deliveries/:reference/proof/signature.svg") { request, context in try await svg(request, context) }
        group.get("deliveries/:reference/proof/points") { request, context in try await points(request, context) }
    }

    // MARK: Upload

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
        /// part of the cost (Foundation's encoder took about 90 µs per upload, 1.4 % of the machine
        /// under upload load). No value needs escaping: a reference is letters, digits and `._:-`,
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

    func upload(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let actor = try context.require(.uploadProof)
        let reference = try DeliveryRoutes.reference(context)
        let receivedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
        let contentType = try RequestBodyReader.requireJSON(request)
        let encoding = try Self.contentEncoding(request)
        let received = try await RequestBodyReader.collect(request, limit: bodyLimit)
        let json: [UInt8]
        if encoding == "gzip" {
            do {
                json = try GzipInflater.inflate(received, limit: bodyLimit)
            } catch .tooLarge(let limit) {
                throw RequestBodyReader.tooLarge(limit: limit, what: "The inflated request body")
            } catch .invalid(let message) {
                throw Problem.badRequest("The body is not valid gzip: \(message).", code: "invalid_gzip")
            }
        } else {
            json = received
        }
        let bodySHA256 = SHA256.hash(received)

        var claimedKey: String?
        defer { if let claimedKey { idempotency.finished(apiKeyID: actor.keyID, key: claimedKey) } }
        if let key = request.headers[.idempotencyKey] {
            guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw Problem.badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters.", code: "invalid_idempotency_key")
            }
            let fingerprint = SHA256.hash(Array("POST \(request.uri.path)\n\(encoding ?? "")\n".utf8) + bodySHA256)
            switch try await idempotency.claim(apiKeyID: actor.keyID, key: key, requestSHA256: fingerprint) {
            case .claimed:
                claimedKey = key
            case .replay(let stored):
                var headers: HTTPFields = [.idempotentReplayed: "true"]
                if let location = stored.location { headers[.location] = location }
                headers[.contentType] = stored.contentType
                return Response(status: .init(code: stored.status), headers: headers,
                                body: .init(byteBuffer: ByteBuffer(bytes: stored.body)))
            case .inFlight:
                throw Problem(.conflict, code: "idempotency_key_in_flight",
                              detail: "A request with this Idempotency-Key is still being processed; retry shortly.",
                              headers: [.retryAfterHeader: "1"])
            case .mismatch:
                throw Problem(.unprocessableContent, code: "idempotency_key_reused",
                              detail: "This Idempotency-Key was already used with a different request body.",
                              errors: [.init(field: "Idempotency-Key", message: "already used with another body", code: "idempotency_key_reused")])
            }
        }
        do {
            let response = try await store(json: json, received: received, bodySHA256: bodySHA256, contentType: contentType,
                                            encoding: encoding, reference: reference, receivedAt: receivedAt, actor: actor,
                                            idempotencyKey: claimedKey, origin: context.auditOrigin(request))
            return response
        } catch {
            if let claimedKey {
                do { try await idempotency.release(apiKeyID: actor.keyID, key: claimedKey) } catch {
                    context.logger.warning("could not release idempotency key", metadata: ["error": "\(error)"])
                }
            }
            throw error
        }
    }

    static func contentEncoding(_ request: Request) throws -> String? {
        guard let raw = request.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased(), !raw.isEmpty,
              raw != "identity" else { return nil }
        guard raw == "gzip" || raw == "x-gzip" else {
            throw Problem(.unsupportedMediaType, code: "unsupported_content_encoding",
                          detail: "Content-Encoding \(raw.prefix(40)) is not supported; send gzip or nothing.")
        }
        return "gzip"
    }

    private func store(json: [UInt8], received: [UInt8], bodySHA256: [UInt8], contentType: String, encoding: String?,
                       reference: String, receivedAt: Date, actor: Actor, idempotencyKey: String?,
                       origin: AuditOrigin) async throws -> Response {
        let upload = try ProofUploadRequest.parse(json, parser: parser)
        guard let state = try await proofs.deliveryState(reference: reference) else {
            throw Problem(.notFound, code: "delivery_not_found", detail: "No delivery has the reference \(reference).")
        }
        if state.proofID != nil { throw Self.alreadyRecorded(reference) }

        // Geofence and clock.
        var flags: [String] = []
        var distance: Double?
        if let location = upload.location {
            if let destination = state.destination {
                distance = location.point.distance(to: destination)
                if distance! > policy.geofenceRadiusMeters { flags.append("outside_geofence") }
            }
            if let accuracy = location.accuracyMeters, accuracy > policy.geofenceRadiusMeters { flags.append("poor_location_accuracy") }
        } else {
            flags.append("no_location")
        }
        if upload.capturedAt.date.timeIntervalSince(receivedAt) > policy.clockAheadTolerance { flags.append("clock_ahead") }

        // Canonical ink, and the PNG rendered from exactly that (so a re-render of the stored ink matches).
        let canonical = InkSerializer.serialize(upload.ink)
        let image: RenderedImage
        let stored: InkDocument
        let metrics = CountersignMetrics.current
        do {
            stored = try parser.parse(canonical, format: .ink)
            var timings = RenderTimings()
            image = try SignatureRenderer.renderPNG(stored, options: renderOptions, timings: &timings)
            metrics?.recordRender(timings, purpose: .upload)
        } catch let error as InkError {
            throw ProofUploadRequest.inkProblem(error, member: upload.inkFormat)
        } catch let error as RenderError {
            if case .options(let optionsError) = error { throw ProofUploadRequest.inkProblem(optionsError, member: upload.inkFormat) }
            throw error
        }
        let pngSHA256 = SHA256.hash(image.png)
        let proofID = UUID()
        let body = UploadResponse(proofID: proofID, reference: reference, receivedAt: receivedAt, pointsSHA256: bodySHA256,
                                  pngSHA256: pngSHA256, distance: distance, flags: flags)
        let bytes = body.json
        let location = DeliveryResource.path(reference) + "/proof"
        let proof = NewProof(
            id: proofID, signerName: upload.signerName, capturedAt: upload.capturedAt.date,
            capturedAtOffsetMinutes: upload.capturedAt.offsetMinutes, capturedAtText: upload.capturedAt.text, receivedAt: receivedAt,
            location: upload.location, distanceToDestinationMeters: distance, geofenceRadiusMeters: policy.geofenceRadiusMeters,
            flags: flags, device: upload.device, body: received, bodyContentType: contentType, bodyContentEncoding: encoding,
            bodySHA256: bodySHA256, inkFormat: upload.inkFormat, ink: canonical, pointCount: stored.pointCount,
            strokeCount: stored.strokes.count, png: image.png, pngSHA256: pngSHA256, pngWidth: image.width, pngHeight: image.height,
            renderOptionsJSON: renderOptionsJSON, algorithmVersion: SignatureReconstructor.algorithmVersion,
            uploadedBy: actor.keyID, idempotencyKey: idempotencyKey)
        do {
            try await proofs.record(proof, reference: reference, idempotency: idempotencyKey.map {
                (actor.keyID, $0, IdempotentResponse(status: 201, contentType: "application/json", location: location, body: bytes))
            }, origin: origin)
        } catch ProofStoreError.deliveryNotFound {
            throw Problem(.notFound, code: "delivery_not_found", detail: "No delivery has the reference \(reference).")
        } catch ProofStoreError.proofAlreadyRecorded {
            throw Self.alreadyRecorded(reference)
        }
        metrics?.recordProofStored(pngBytes: image.png.count)
        return JSONResponse.make(.created, bytes: bytes, headers: [.location: location])
    }

    static func alreadyRecorded(_ reference: String) -> Problem {
        Problem(.conflict, code: "proof_already_recorded",
                detail: "Delivery \(reference) already has a proof; proofs are immutable.")
    }

    // MARK: Retrieval

    /// The problem for a delivery whose proof cannot be read: 410 `proof_archived` when the
    /// delivery is delivered (so it had a proof, and the retention procedure has since dropped its
    /// month, docs/scaling.md), else 404 `proof_not_found`.
    func proofNotFound(_ reference: String) async -> Problem {
        if let delivery = try? await deliveries.find(reference: reference), delivery.status == .delivered {
            return Problem(.gone, code: "proof_archived",
                           detail: "Delivery \(reference) was delivered, but its proof is no longer in this database: its month was "
                               + "archived and removed by the retention procedure. The archived export bundle holds it.")
        }
        return Problem(.notFound, code: "proof_not_found", detail: "Delivery \(reference) has no proof (or does not exist).")
    }

    func metadata(_ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readProof)
        let reference = try DeliveryRoutes.reference(context)
        guard let proof = try await proofs.metadata(reference: reference) else { throw await proofNotFound(reference) }
        return JSONResponse.make(.ok, bytes: try ProofMetadataResource.encode(proof))
    }

    /// The SHA-256 named by `If-None-Match` when it matches `sha256` (list, weak and `*` forms accepted).
    static func etagMatches(_ request: Request, sha256: [UInt8]) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        let hex = sha256.hexString
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == hex { return true }
        }
        return false
    }

    static func firstETag(_ request: Request) -> [UInt8]? {
        guard let header = request.headers[.ifNoneMatch] else { return nil }
        let tag = header.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let hex = tag.trimmingCharacters(in: CharacterSet(charactersIn: "W/\""))
        guard hex.utf8.count == 64 else { return nil }
        return Hex.decode(hex)
    }

    static func cached(_ status: HTTPResponse.Status, type: String, sha256: [UInt8], body: [UInt8]?) -> Response {
        let headers: HTTPFields = [
            .contentType: type, .eTag: "\"\(sha256.hexString)\"", .cacheControl: "private, max-age=31536000, immutable",
        ]
        return Response(status: status, headers: headers, body: body.map { .init(byteBuffer: ByteBuffer(bytes: $0)) } ?? .init())
    }

    func png(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let reference = try DeliveryRoutes.reference(context)
        try await requireImageReader(context, reference: reference)
        let query = request.uri.queryParameters
        if query["width"] != nil || query["height"] != nil {
            var size: [String: Int] = [:]
            var errors: [Problem.FieldError] = []
            let maxSide = renderOptions.layout.maxPixelWidth
            for name in ["width", "height"] {
                guard let raw = query[Substring(name)] else { continue }
                if let value = Int(raw), (1...maxSide).contains(value) { size[name] = value } else {
                    errors.append(.init(field: name, message: "an integer in 1...\(maxSide)", code: "invalid_size"))
                }
            }
            guard errors.isEmpty else { throw Problem.validation("The image size is not valid.", errors: errors) }
            var (document, options) = try await storedInk(reference)
            (options.layout.width, options.layout.height) = (size["width"], size["height"])
            let image: RenderedImage
            do {
                var timings = RenderTimings()
                image = try SignatureRenderer.renderPNG(document, options: options, timings: &timings)
                CountersignMetrics.current?.recordRender(timings, purpose: .resize)
            } catch {
                throw Problem(.unprocessableContent, code: "render_failed", detail: error.description)
            }
            let sha = SHA256.hash(image.png)
            try await recordRead(.proofPNGRead, reference: reference, request, context, details: ["png_sha256": sha.hexString])
            if Self.etagMatches(request, sha256: sha) { return Self.cached(.notModified, type: "image/png", sha256: sha, body: nil) }
            return Self.cached(.ok, type: "image/png", sha256: sha, body: image.png)
        }
        // From memory when cached, else from the database (which leaves the bytes out when the ETag matches).
        let sha256: [UInt8], bytes: [UInt8]?
        if let cached = pngCache.entry(for: reference) {
            (sha256, bytes) = (cached.sha256, cached.bytes)
        } else {
            guard let stored = try await proofs.png(reference: reference, ifNoneMatch: Self.firstETag(request)) else {
                throw await proofNotFound(reference)
            }
            if let bytes = stored.bytes { pngCache.remember(.init(sha256: stored.sha256, bytes: bytes), for: reference) }
            (sha256, bytes) = (stored.sha256, stored.bytes)
        }
        try await recordRead(.proofPNGRead, reference: reference, request, context, details: ["png_sha256": sha256.hexString])
        if bytes == nil || Self.etagMatches(request, sha256: sha256) {
            return Self.cached(.notModified, type: "image/png", sha256: sha256, body: nil)
        }
        return Self.cached(.ok, type: "image/png", sha256: sha256, body: bytes)
    }

    /// The proof readers, plus a courier asking for the PNG or SVG of a proof its own key uploaded
    /// (so the capture app can show what the server stored); anyone else gets the usual 401/403.
    func requireImageReader(_ context: AppRequestContext, reference: String) async throws {
        if let actor = context.actor, !Permission.readProof.roles.contains(actor.role), actor.role == .courier,
           try await proofs.uploader(reference: reference) == actor.keyID {
            return
        }
        _ = try context.require(.readProof)
    }

    /// Appends the audit event for a read of proof content; the response is only sent once it is committed.
    func recordRead(_ action: AuditAction, reference: String, _ request: Request, _ context: AppRequestContext,
                    details: [String: String]) async throws {
        try await audit.append(action, subject: "delivery:\(reference)", details: details, origin: context.auditOrigin(request))
    }

    /// The proof's stored ink and the render options its PNG was made with.
    func storedInk(_ reference: String) async throws -> (InkDocument, RenderOptions) {
        guard let stored = try await proofs.ink(reference: reference) else { throw await proofNotFound(reference) }
        do {
            return (try parser.parse(stored.ink, format: .ink), StoredRenderOptions.options(stored.renderOptionsJSON, base: renderOptions))
        } catch {
            throw Problem(.internalServerError, code: "stored_ink_unreadable", detail: "The stored ink could not be read: \(error.description)")
        }
    }

    func svg(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let reference = try DeliveryRoutes.reference(context)
        try await requireImageReader(context, reference: reference)
        let (document, options) = try await storedInk(reference)
        let svg: [UInt8]
        do {
            svg = try SignatureRenderer.renderSVGBytes(document, options: options)
        } catch {
            throw Problem(.unprocessableContent, code: "render_failed", detail: error.description)
        }
        let sha = SHA256.hash(svg)
        try await recordRead(.proofSVGRead, reference: reference, request, context, details: ["svg_sha256": sha.hexString])
        if Self.etagMatches(request, sha256: sha) { return Self.cached(.notModified, type: "image/svg+xml", sha256: sha, body: nil) }
        return Self.cached(.ok, type: "image/svg+xml", sha256: sha, body: svg)
    }

    func points(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        _ = try context.require(.readProof)
        let reference = try DeliveryRoutes.reference(context)
        if let format = request.uri.queryParameters["format"], format != "original" {
            guard format == "inkml" else {
                throw Problem.validation("Unknown format.", errors: [.init(field: "format", message: "original or inkml", code: "invalid_format")])
            }
            let (document, _) = try await storedInk(reference)
            try await recordRead(.proofPointsRead, reference: reference, request, context, details: ["format": "inkml"])
            return Response(status: .ok, headers: [.contentType: "application/inkml+xml"],
                            body: .init(byteBuffer: ByteBuffer(bytes: InkMLWriter.inkml(document))))
        }
        guard let body = try await proofs.body(reference: reference) else { throw await proofNotFound(reference) }
        try await recordRead(.proofPointsRead, reference: reference, request, context,
                             details: ["format": "original", "points_sha256": body.sha256.hexString])
        var headers: HTTPFields = [
            .contentType: body.contentType, .eTag: "\"\(body.sha256.hexString)\"", .cacheControl: "private, max-age=31536000, immutable",
        ]
        var bytes = body.bytes
        if body.contentEncoding == "gzip" {
            let accepts = request.headers[.acceptEncoding]?.lowercased().contains("gzip") ?? false
            if accepts {
                headers[.contentEncoding] = "gzip"
            } else {
                do {
                    bytes = try GzipInflater.inflate(bytes, limit: 256 << 20)
                } catch {
                    throw Problem(.internalServerError, code: "stored_body_unreadable", detail: "The stored body could not be inflated.")
                }
            }
        }
        if Self.etagMatches(request, sha256: body.sha256) { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
