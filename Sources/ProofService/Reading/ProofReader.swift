import Cryptography
import Foundation
import ProofStore
import SignatureKit
import SignatureRender

/// Reading a proof: its metadata, its stored PNG (cached), PNGs of other sizes, the SVG and InkML
/// rendered again from the stored ink, and the original body — each read audited.
public struct ProofReader: Sendable {
    let proofs: ProofRepository
    let deliveries: DeliveryRepository
    let audit: AuditLog
    let parser: InkParser
    /// The service's render options: the base under each proof's stored options.
    let renderOptions: RenderOptions
    let pngCache: StoredPNGCache
    let metrics: (any ServiceMetrics)?
    /// Where stored ink is parsed and rendered again.
    let work: CPUWorkPool

    /// Creates the use case over the repositories; stored PNGs are cached up to `pngCacheBytes`.
    public init(proofs: ProofRepository, deliveries: DeliveryRepository, audit: AuditLog, pngCacheBytes: Int, work: CPUWorkPool,
                renderOptions: RenderOptions = RenderOptions(), metrics: (any ServiceMetrics)? = nil) {
        self.work = work
        self.proofs = proofs
        self.deliveries = deliveries
        self.audit = audit
        self.parser = InkParser()
        self.renderOptions = renderOptions
        self.pngCache = StoredPNGCache(byteLimit: pngCacheBytes)
        self.metrics = metrics
    }

    /// The largest width and height a resized PNG may ask for.
    public var maxPixelSide: Int { renderOptions.layout.maxPixelWidth }

    /// The refusal for a delivery whose proof cannot be read: 410 `proof_archived` when the
    /// delivery is delivered (so it had a proof, and the retention procedure has since dropped its
    /// month, docs/scaling.md), else 404 `proof_not_found`.
    public func missing(_ reference: String) async -> ServiceError {
        if let delivery = try? await deliveries.find(reference: reference), delivery.status == .delivered {
            return ServiceError(.gone, code: "proof_archived",
                                detail: "Delivery \(reference) was delivered, but its proof is no longer in this database: its month was "
                                    + "archived and removed by the retention procedure. The archived export bundle holds it.")
        }
        return ServiceError(.notFound, code: "proof_not_found", detail: "Delivery \(reference) has no proof (or does not exist).")
    }

    /// The proof's metadata.
    public func metadata(_ reference: String) async throws -> ProofMetadata {
        guard let proof = try await proofs.metadata(reference: reference) else { throw await missing(reference) }
        return proof
    }

    /// Whether the key `keyID` uploaded the proof of `reference`.
    /// Forgets the cached image of `reference`, whose delivery was just erased here. Other
    /// replicas keep theirs until it expires (``StoredPNGCache``'s time to live).
    public func forgetImage(_ reference: String) {
        pngCache.forget(reference)
    }

    public func isUploader(_ keyID: UUID, of reference: String) async throws -> Bool {
        try await proofs.uploader(reference: reference) == keyID
    }

    /// The stored PNG's digest and, unless `ifNoneMatch` names that digest and it was read from the
    /// database, its bytes: from memory when cached.
    public func storedPNG(_ reference: String, ifNoneMatch: [UInt8]?) async throws -> (sha256: [UInt8], bytes: [UInt8]?) {
        if let cached = pngCache.entry(for: reference) { return (cached.sha256, cached.bytes) }
        guard let stored = try await Self.opening({ try await proofs.png(reference: reference, ifNoneMatch: ifNoneMatch) }) else {
            throw await missing(reference)
        }
        if let bytes = stored.bytes { pngCache.remember(.init(sha256: stored.sha256, bytes: bytes), for: reference) }
        return (stored.sha256, stored.bytes)
    }

    /// A PNG of the stored ink at `width` and/or `height` pixels, with the options the stored PNG
    /// was made with, rendered for `requester` on the CPU pool.
    public func resizedPNG(_ reference: String, width: Int?, height: Int?, for requester: UUID?) async throws -> [UInt8] {
        try await rendering(reference, for: requester) { (document, options) throws(RenderError) -> [UInt8] in
            var options = options
            (options.layout.width, options.layout.height) = (width, height)
            var timings = RenderTimings()
            let image = try SignatureRenderer.renderPNG(document, options: options, timings: &timings)
            metrics?.recordRender(timings, purpose: .resize)
            return image.png
        }
    }

    /// The SVG of the stored ink, rendered for `requester` on the CPU pool.
    public func svg(_ reference: String, for requester: UUID?) async throws -> [UInt8] {
        try await rendering(reference, for: requester) { (document, options) throws(RenderError) -> [UInt8] in
            try SignatureRenderer.renderSVGBytes(document, options: options)
        }
    }

    /// The stored ink as InkML, written for `requester` on the CPU pool.
    public func inkml(_ reference: String, for requester: UUID?) async throws -> [UInt8] {
        try await rendering(reference, for: requester) { document, _ in InkMLWriter.inkml(document) }
    }

    /// The body exactly as it was uploaded.
    public func original(_ reference: String) async throws -> StoredBody {
        guard let body = try await Self.opening({ try await proofs.body(reference: reference) }) else { throw await missing(reference) }
        return body
    }

    /// `read`'s result, its sealing failures as the service's errors (``ServiceError/sealing(_:)``).
    static func opening<T>(_ read: () async throws -> T) async throws -> T {
        do {
            return try await read()
        } catch let error as SealingError {
            throw ServiceError.sealing(error)
        }
    }

    /// Appends the audit event for a read of proof content; callers answer only once it is committed.
    public func recordRead(_ action: AuditAction, reference: String, details: [String: String], origin: AuditOrigin) async throws {
        try await audit.append(action, subject: "delivery:\(reference)", details: details, origin: origin)
    }

    /// `render` applied, on the CPU pool, to the proof's stored ink and the render options its PNG
    /// was made with; a render failure is 422 `render_failed`.
    func rendering<T: Sendable>(_ reference: String, for requester: UUID?,
                                _ render: @escaping @Sendable (InkDocument, RenderOptions) throws(RenderError) -> T) async throws -> T {
        guard let stored = try await Self.opening({ try await proofs.ink(reference: reference) }) else { throw await missing(reference) }
        let (parser, base) = (parser, renderOptions)
        return try await work.run(for: requester, weight: ProofIntake.weight(bytes: stored.ink.count, points: stored.pointCount)) {
            let document: InkDocument
            do {
                document = try parser.parse(stored.ink, format: .ink)
            } catch {
                throw ServiceError(.internalError, code: "stored_ink_unreadable", detail: "The stored ink could not be read: \(error)")
            }
            do {
                return try render(document, StoredRenderOptions.options(stored.renderOptionsJSON, base: base))
            } catch {
                throw ServiceError(.unprocessable, code: "render_failed", detail: "\(error)")
            }
        }
    }
}
