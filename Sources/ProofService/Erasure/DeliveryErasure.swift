import Foundation
import Postgres
import ProofStore

/// Erasing one delivery's personal data on request (GDPR Art. 17), and the legal hold that
/// forbids it (Art. 17(3)(e)); docs/data-protection.md §4, decision 0044.
///
/// Erasure destroys the delivery's data key and removes every clear personal fact in one
/// transaction with its `delivery_erased` audit event; asking again changes nothing and answers
/// the first erasure. A pending delivery is cancelled first (409 `delivery_pending`); a held one
/// is refused (409 `legal_hold`). The audit chain is never changed, so it still verifies.
public struct DeliveryErasure: Sendable {
    let deliveries: DeliveryRepository
    let erasures: ErasureRepository
    let reader: ProofReader?

    /// Creates the use case; `reader`'s image cache (a server's; none for a command) is emptied of what is erased.
    public init(deliveries: DeliveryRepository, erasures: ErasureRepository, reader: ProofReader?) {
        self.deliveries = deliveries
        self.erasures = erasures
        self.reader = reader
    }

    /// The longest reason, in code points (the database allows no more for a hold either). A
    /// reason is kept in the audit chain for good: a case or ticket number, not a name.
    public static let maxReasonLength = 200


    /// What an erasure request answered: the delivery as it now is, and whether an earlier request
    /// had erased it already.
    public struct Result: Sendable {
        public var delivery: Delivery
        public var alreadyErased: Bool
    }

    /// Erases the delivery `reference` for the reason `body` gives.
    public func erase(_ reference: String, body: [UInt8], by actor: Actor, origin: AuditOrigin) async throws -> Result {
        let reason = try ReasonBody.reason(of: body, lengths: 1...Self.maxReasonLength)
        let outcome = try await refusingActor(actor, "erase deliveries", reference) {
            try await erasures.transaction { session in
                let outcome = try await ErasureRepository.erase(reference: reference, credential: origin.credential, in: session)
                if case .erasedNow(let deliveryID, _, _) = outcome {
                    try await AuditLog.append(.deliveryErased, subject: "delivery:\(reference)",
                                              details: ["delivery_id": deliveryID.uuidString.lowercased(), "rule": "request", "reason": reason],
                                              origin: origin, in: session)
                }
                return outcome
            }
        }
        switch outcome {
        case .pending:
            throw ServiceError(.conflict, code: "delivery_pending",
                               detail: "Delivery \(reference) is pending: cancel it before erasing it (an erased delivery can never be completed).")
        case .held:
            throw ServiceError(.conflict, code: "legal_hold",
                               detail: "Delivery \(reference) is under a legal hold: clear the hold before erasing it.")
        case .erasedNow: return try await erased(reference, already: false)
        case .alreadyErased: return try await erased(reference, already: true)
        }
    }

    /// The erased delivery `reference` as it now is; this server's cached image of it forgotten.
    func erased(_ reference: String, already: Bool) async throws -> Result {
        reader?.forgetImage(reference)
        guard let delivery = try await deliveries.findWithAttempts(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
        return Result(delivery: delivery, alreadyErased: already)
    }

    /// What a hold request answered: the hold that stands, and whether it stood already.
    public struct HoldResult: Sendable {
        public var hold: LegalHold
        public var alreadyHeld: Bool
    }

    /// Holds the delivery `reference` for the reason `body` gives; a hold that stands is kept as it is.
    public func hold(_ reference: String, body: [UInt8], by actor: Actor, origin: AuditOrigin) async throws -> HoldResult {
        let reason = try ReasonBody.reason(of: body, lengths: 1...Self.maxReasonLength)
        let outcome = try await refusingActor(actor, "set legal holds", reference) {
            try await erasures.transaction { session in
                let (deliveryID, outcome) = try await ErasureRepository.setHold(reference: reference, reason: reason,
                                                                                credential: origin.credential, in: session)
                if case .heldNow = outcome {
                    try await AuditLog.append(.legalHoldSet, subject: "delivery:\(reference)",
                                              details: ["delivery_id": deliveryID.uuidString.lowercased(), "reason": reason],
                                              origin: origin, in: session)
                }
                return outcome
            }
        }
        switch outcome {
        case .heldNow(let hold): return HoldResult(hold: hold, alreadyHeld: false)
        case .alreadyHeld:
            guard let hold = try await erasures.hold(reference: reference) else { throw ServiceError.deliveryNotFound(reference) }
            return HoldResult(hold: hold, alreadyHeld: true)
        case .erased:
            throw ServiceError(.conflict, code: "delivery_erased", detail: "Delivery \(reference) was erased: there is nothing left to hold.")
        }
    }

    /// Clears the hold of `reference`; whether there was one (clearing none changes nothing).
    public func clearHold(_ reference: String, by actor: Actor, origin: AuditOrigin) async throws -> Bool {
        try await refusingActor(actor, "clear legal holds", reference) {
            try await erasures.transaction { session in
                let (deliveryID, cleared) = try await ErasureRepository.clearHold(reference: reference, credential: origin.credential, in: session)
                if cleared {
                    try await AuditLog.append(.legalHoldCleared, subject: "delivery:\(reference)",
                                              details: ["delivery_id": deliveryID.uuidString.lowercased()], origin: origin, in: session)
                }
                return cleared
            }
        }
    }

    /// The hold of `reference`, if any; 404 for no such delivery.
    public func currentHold(_ reference: String) async throws -> LegalHold? {
        guard try await deliveries.find(reference: reference) != nil else { throw ServiceError.deliveryNotFound(reference) }
        return try await erasures.hold(reference: reference)
    }

    /// `body`'s result, with the database's refusals as the service's errors.
    func refusingActor<T>(_ actor: Actor, _ what: String, _ reference: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch ErasureError.deliveryNotFound {
            throw ServiceError.deliveryNotFound(reference)
        } catch ErasureError.actorRefused {
            throw ServiceError(.forbidden, code: "forbidden", detail: "Key \(actor.keyID.uuidString.lowercased()) may not \(what).")
        }
    }
}
