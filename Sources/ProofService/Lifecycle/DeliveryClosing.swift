import Foundation
import Postgres
import ProofStore

/// Ending a pending delivery without a proof: cancelling it, or giving it up (`failed`, returned
/// to sender) after failed attempts. The database refuses a delivery that is not pending (409
/// `invalid_transition`: a second cancel, a delivered one); the change and its audit event commit
/// together.
public struct DeliveryClosing: Sendable {
    let deliveries: DeliveryRepository
    let lifecycle: LifecycleRepository

    /// Creates the use case.
    public init(deliveries: DeliveryRepository, lifecycle: LifecycleRepository) {
        self.deliveries = deliveries
        self.lifecycle = lifecycle
    }

    /// The longest reason, in code points (the database allows no more either).
    public static let maxReasonLength = 500


    /// Closes the delivery `reference` as `status` (`.cancelled` or `.failed`) for the reason `body`
    /// gives; returns the delivery as it now is, with its attempts.
    public func close(_ reference: String, as status: DeliveryStatus, body: [UInt8], by actor: Actor, at closedAt: Date,
                      origin: AuditOrigin) async throws -> Delivery {
        precondition(status.isClosed, "a delivery is closed as failed or cancelled")
        let reason = try ReasonBody.reason(of: body, lengths: 1...Self.maxReasonLength)
        guard let current = try await deliveries.find(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
        guard current.status == .pending else { throw ServiceError.invalidTransition(reference, from: current.status, to: status) }
        let action: AuditAction = status == .cancelled ? .deliveryCancelled : .deliveryFailed
        do {
            try await lifecycle.transaction { session in
                let (deliveryID, closedBy, salt) = try await lifecycle.close(reference: reference, as: status, reason: reason,
                                                                             credential: origin.credential, at: closedAt, in: session)
                try await AuditLog.append(action, subject: "delivery:\(reference)",
                                          details: try LifecycleRepository.closureDetails(reference: reference, deliveryID: deliveryID,
                                                                                          status: status, reason: reason, by: closedBy,
                                                                                          at: closedAt, salt: salt),
                                          origin: origin, in: session)
                // In this transaction, so the event exists exactly when the change commits. Giving up
                // (`failed`) has no event type of its own yet (docs/webhooks.md).
                if status == .cancelled {
                    WebhookOutbox.enqueue(.deliveryCancelled(reference: reference, reason: reason, cancelledAt: closedAt), in: session)
                }
            }
        } catch LifecycleError.deliveryNotFound {
            throw ServiceError.deliveryNotFound(reference)
        } catch LifecycleError.invalidTransition(let message) {
            throw ServiceError.invalidTransition(reference, databaseSaid: message)
        } catch LifecycleError.actorRefused {
            throw ServiceError(.forbidden, code: "forbidden", detail: "Key \(actor.keyID.uuidString.lowercased()) may not close deliveries any more.")
        } catch LifecycleError.clockSkew(let message) {
            throw ServiceError(.unavailable, code: "clock_skew",
                               detail: "The service's clock and the database's differ by more than five minutes (\(message)); retry once they agree.")
        }
        guard let closed = try await deliveries.findWithAttempts(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
        return closed
    }
}
