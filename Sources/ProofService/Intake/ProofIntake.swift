import Cryptography
import Foundation
import ProofStore
import SignatureKit
import SignatureRender

/// Recording a proof: the one use case an upload walks through, once, from received body to
/// stored row — judge the device key, find the delivery, verify the device signature, parse,
/// canonicalise the ink and render it (one CPU-pool job),
/// assess the capture, hash, store (with its audit event and idempotency record in the same
/// transaction). A refusal for the delivery (404, 409) comes before any refusal of the body.
public struct ProofIntake: Sendable {
    let proofs: ProofRepository
    let policy: APIPolicy
    let parser: InkParser
    let renderOptions: RenderOptions
    /// `renderOptions` as stored with every proof (made once: it does not change while serving).
    let renderOptionsJSON: String
    let metrics: (any ServiceMetrics)?
    /// Where parsing and rendering run (never on the caller's thread).
    let work: CPUWorkPool
    /// Judges the upload's device signature (`DEVICE_KEYS`).
    let devices: DeviceSignatureCheck

    /// Creates the use case; `metrics`, when given, hears of every render and stored proof.
    public init(proofs: ProofRepository, devices: DeviceKeyRepository, policy: APIPolicy, work: CPUWorkPool,
                renderOptions: RenderOptions = RenderOptions(), metrics: (any ServiceMetrics)? = nil) {
        self.proofs = proofs
        self.devices = DeviceSignatureCheck(keys: devices, mode: policy.deviceKeys)
        self.work = work
        self.policy = policy
        self.parser = InkParser()
        self.renderOptions = renderOptions
        self.renderOptionsJSON = StoredRenderOptions.json(renderOptions)
        self.metrics = metrics
    }

    /// Stores the proof `upload` carries for the delivery `reference`, uploaded by `actor`.
    ///
    /// `respond` shapes the answer from the recorded proof; with an `idempotencyKey` (already
    /// claimed by the caller) that answer is stored with the proof, so a replay returns the same
    /// bytes. Refusals are ``ServiceError``s: 404 `delivery_not_found`, 409
    /// `proof_already_recorded`, 409 `invalid_transition` (failed or cancelled), 400/422 for the body and its ink,
    /// 400/403 `device_*` for the device signature (`deviceClaim`, judged first: ``DeviceSignatureCheck``).
    public func accept(_ upload: ReceivedUpload, reference: String, actor: Actor, receivedAt: Date, origin: AuditOrigin,
                       idempotencyKey: String?, deviceClaim: DeviceSignatureClaim = DeviceSignatureClaim(keyID: nil, signature: nil),
                       respond: (RecordedProof) -> IdempotentResponse) async throws -> IdempotentResponse {
        // The device key and the delivery first (403 / 404 / 409 before any parsing or rendering),
        // then the CPU work as one job: each job is a hand-over to a pool thread and back, about
        // 40 µs of CPU in wake-ups and continuations, as much as half the parse
        // (docs/decisions/0027-upload-cost.md). In that job the signature is verified first, so a
        // body that is not the device's is refused before its ink costs anything.
        let signer = try await devices.signer(for: deviceClaim, actor: actor)
        guard let state = try await proofs.deliveryState(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
        if state.status == .delivered { throw Self.alreadyRecorded(reference) }
        if state.status.isClosed { throw ServiceError.invalidTransition(reference, from: state.status, to: .delivered) }
        let weight = Self.weight(bytes: upload.json.count)
        let (capture, deviceSignature, renderedInline) = try await work.run(for: actor.keyID, weight: weight) {
            [self, json = upload.json, sha256 = upload.sha256] in
            let signed = try signer?.verify(reference: reference, bodySHA256: sha256)
            let capture = try ProofUpload.parse(json, parser: parser)
            // A small body can still carry more points than a light job should render: that ink
            // goes to the heavy threads as a job of its own; every other one renders right here.
            let heavyInk = weight == .light && capture.ink.pointCount > Self.heavyPoints
            return (capture, signed, heavyInk ? nil : try render(capture))
        }
        let (ink, image, renderOptionsJSON): (CanonicalInk, RenderedImage, String)
        if let renderedInline {
            (ink, image, renderOptionsJSON) = renderedInline
        } else {
            (ink, image, renderOptionsJSON) = try await work.run(for: actor.keyID, weight: .heavy) { [self] in try render(capture) }
        }
        let assessment = ProofAssessment(location: capture.location, destination: state.destination,
                                         capturedAt: capture.capturedAt.date, receivedAt: receivedAt, policy: policy)
        let recorded = RecordedProof(id: .timeOrdered(at: receivedAt), reference: reference, receivedAt: receivedAt, bodySHA256: upload.sha256,
                                     pngSHA256: SHA256.hash(image.png),
                                     distanceToDestinationMeters: assessment.distanceToDestinationMeters, flags: assessment.flags)
        let response = respond(recorded)
        let proof = NewProof(
            id: recorded.id,
            capture: ProofCapture(signerName: capture.signerName,
                                  capturedAt: CaptureTime(date: capture.capturedAt.date, offsetMinutes: capture.capturedAt.offsetMinutes,
                                                          text: capture.capturedAt.text),
                                  location: capture.location, device: capture.device),
            body: ReceivedBody(bytes: upload.bytes, contentType: upload.contentType, contentEncoding: upload.contentEncoding,
                               sha256: upload.sha256, receivedAt: receivedAt),
            rendering: ProofRendering(inkFormat: capture.inkFormat, ink: ink.bytes, pointCount: ink.document.pointCount,
                                      strokeCount: ink.document.strokes.count, png: image.png, pngSHA256: recorded.pngSHA256,
                                      pngWidth: image.width, pngHeight: image.height, renderOptionsJSON: renderOptionsJSON,
                                      algorithmVersion: SignatureReconstructor.algorithmVersion),
            assessment: assessment,
            uploadedBy: actor.keyID, idempotencyKey: idempotencyKey, deviceSignature: deviceSignature)
        do {
            try await proofs.record(proof, reference: reference, dataKey: state.dataKey, idempotency: idempotencyKey.map { (actor.keyID, $0, response) },
                                    origin: origin)
        } catch ProofStoreError.deliveryNotFound {
            throw ServiceError.deliveryNotFound(reference)
        } catch ProofStoreError.proofAlreadyRecorded {
            throw Self.alreadyRecorded(reference)
        } catch ProofStoreError.deliveryClosed(let status) {
            throw ServiceError.invalidTransition(reference, from: status, to: .delivered)
        } catch ProofStoreError.deviceKeyNotUsable {
            throw ServiceError(.forbidden, code: "device_key_revoked",
                               detail: "The device key stopped being approved while the upload was stored.")
        } catch let error as SealingError {
            throw ServiceError.sealing(error)
        }
        metrics?.recordProofStored(pngBytes: image.png.count)
        return response
    }

    /// 503 `busy` for an upload declaring `contentLength` bytes when that makes it heavy work and
    /// heavy work may not start now for `actor` (``CPUWorkPool/heavyRefusal(for:)``); nil otherwise.
    /// Asked before the body is read, so the refused client's large body is never received: the
    /// answer closes the connection.
    public func earlyRefusal(contentLength: Int?, actor: Actor) -> ServiceError? {
        guard let contentLength, Self.weight(bytes: contentLength) == .heavy else { return nil }
        return work.heavyRefusal(for: actor.keyID)
    }

    /// The canonical ink, the PNG rendered from exactly that, and the render options to store with
    /// them (so a re-render of the stored ink matches). A canvas whose PNG at the configured scale
    /// would be over the pixel cap is rendered at the largest scale that fits, and that scale is
    /// what the stored options record; every other upload stores the configured options.
    func render(_ capture: ProofUpload) throws -> (CanonicalInk, RenderedImage, String) {
        do {
            let ink = try CanonicalInk(capture.ink, parser: parser)
            var timings = RenderTimings()
            let (image, used) = try SignatureRenderer.renderFittedPNG(ink.document, options: renderOptions, timings: &timings)
            metrics?.recordRender(timings, purpose: .upload)
            return (ink, image, used == renderOptions ? renderOptionsJSON : StoredRenderOptions.json(used))
        } catch let error as InkError {
            throw ProofUpload.inkRefusal(error, member: capture.inkFormat)
        } catch let error as RenderError {
            if case .options(let optionsError) = error { throw ProofUpload.inkRefusal(optionsError, member: capture.inkFormat) }
            throw error
        }
    }

    /// Bodies and stored inks above this many bytes, and inks above ``heavyPoints`` points, are
    /// heavy work (``CPUWorkPool/Weight``): a signature is a few kilobytes and a few hundred points.
    public static let heavyBytes = 64 << 10
    public static let heavyPoints = 5_000

    /// The weight of parsing `bytes` of input.
    public static func weight(bytes: Int) -> CPUWorkPool.Weight { bytes > heavyBytes ? .heavy : .light }

    /// The weight of re-rendering a stored ink of `bytes` and `points`: timestamps need not grow,
    /// so a point can be 8 bytes and an ink of many points can stay under ``heavyBytes``.
    public static func weight(bytes: Int, points: Int) -> CPUWorkPool.Weight {
        bytes > heavyBytes || points > heavyPoints ? .heavy : .light
    }

    /// 409 for a second proof of one delivery.
    public static func alreadyRecorded(_ reference: String) -> ServiceError {
        ServiceError(.conflict, code: "proof_already_recorded", detail: "Delivery \(reference) already has a proof; proofs are immutable.")
    }
}
