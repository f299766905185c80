import Cryptography
import Foundation
import Postgres
import ProofStore

/// Recording a failed delivery attempt: validate the courier's report, find the delivery (404, or
/// 409 when it is not pending), judge the location against the destination as for a proof, then
/// store the attempt, its audit event and its idempotency record in one transaction. The delivery
/// stays `pending`: it can be attempted again, delivered, given up or cancelled.
public struct AttemptRecording: Sendable {
    let deliveries: DeliveryRepository
    let lifecycle: LifecycleRepository
    let policy: APIPolicy

    /// Creates the use case.
    public init(deliveries: DeliveryRepository, lifecycle: LifecycleRepository, policy: APIPolicy) {
        self.deliveries = deliveries
        self.lifecycle = lifecycle
        self.policy = policy
    }

    /// Stores the attempt `body` reports for the delivery `reference`, made by `actor`.
    ///
    /// `respond` shapes the answer from the stored attempt; with an `idempotencyKey` (claimed by the
    /// caller) that answer is stored in the same transaction, so a replay gets the same bytes.
    /// Refusals: 400/422 for the body, 404 `delivery_not_found`, 409 `invalid_transition`.
    public func record(_ body: [UInt8], reference: String, actor: Actor, receivedAt: Date, origin: AuditOrigin,
                       idempotencyKey: String?, respond: (DeliveryAttempt) throws -> IdempotentResponse) async throws -> IdempotentResponse {
        let report = try AttemptReport.parse(body)
        guard let delivery = try await deliveries.find(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
        guard delivery.status == .pending else {
            throw ServiceError.invalidTransition(reference, from: delivery.status, to: "take another attempt")
        }
        let assessment = ProofAssessment(location: report.location, destination: delivery.destination,
                                         capturedAt: report.capturedAt.date, receivedAt: receivedAt, policy: policy)
        let attempt = NewAttempt(id: .timeOrdered(at: receivedAt), reason: report.reason, note: report.note,
                                 capturedAt: CaptureTime(date: report.capturedAt.date, offsetMinutes: report.capturedAt.offsetMinutes,
                                                         text: report.capturedAt.text),
                                 receivedAt: receivedAt, location: report.location, assessment: assessment, recordedBy: actor.keyID,
                                 idempotencyKey: idempotencyKey)
        let response = try respond(DeliveryAttempt(
            id: attempt.id, reason: attempt.reason, note: attempt.note, capturedAt: attempt.capturedAt.date,
            capturedAtText: attempt.capturedAt.text, receivedAt: receivedAt, location: attempt.location,
            distanceToDestinationMeters: assessment.distanceToDestinationMeters, flags: assessment.flags.map(\.rawValue),
            recordedBy: actor))
        do {
            try await lifecycle.transaction { session in
                let (deliveryID, salt) = try await lifecycle.recordAttempt(
                    attempt, reference: reference, idempotency: idempotencyKey.map { (actor.keyID, $0, response) }, in: session)
                try await AuditLog.append(.attemptRecorded, subject: "delivery:\(reference)",
                                          details: try LifecycleRepository.attemptDetails(attempt, reference: reference, deliveryID: deliveryID,
                                                                                          salt: salt),
                                          origin: origin, in: session)
                // In this transaction, so the event exists exactly when the attempt commits.
                WebhookOutbox.enqueue(.deliveryAttemptFailed(reference: reference, attemptID: attempt.id, reason: attempt.reason.rawValue,
                                                             note: attempt.note, attemptedAt: attempt.capturedAt.date), in: session)
            }
        } catch LifecycleError.deliveryNotFound {
            throw ServiceError.deliveryNotFound(reference)
        } catch LifecycleError.invalidTransition(let message) {
            throw ServiceError.invalidTransition(reference, databaseSaid: message)
        }
        return response
    }
}
