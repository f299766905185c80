import Foundation
import Postgres

/// Erases a delivery's personal data and keeps its legal hold, through migration 0026's SECURITY
/// DEFINER functions: each acts as the key whose token (``ActorCredential``) it is given, so the
/// runtime role alone erases and holds nothing.
///
/// The writes take the caller's session inside ``transaction(_:)``: the use case appends the audit
/// event in the same transaction, so the change and its event commit together.
public struct ErasureRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// Runs `body` in one READ COMMITTED transaction on the primary; `body` may run twice (a stale
    /// plan after a migration is retried), so it must do database work only.
    public func transaction<T: Sendable>(_ body: (PostgresSession) async throws -> T) async throws -> T {
        do {
            return try await database.withTransaction(retryingStalePlans: true, body)
        } catch let error as PostgresError where error.kind == .checkViolation
            && ["erasure_key_allowed", "legal_hold_key_allowed"].contains(error.constraint) {
            throw ErasureError.actorRefused(error.message)
        }
    }

    /// Erases the delivery `reference` as the admin key `credential` belongs to (its data key
    /// destroyed, its personal facts removed: migration 0026), unless it is pending, held or
    /// erased already.
    public static func erase(reference: String, credential: ActorCredential?, in session: PostgresSession) async throws -> ErasureOutcome {
        let result = try await session.query("""
            SELECT delivery_id, outcome, erased_at, erased_by FROM countersign_erase_delivery(\(reference)::text, \(credential?.token)::text)
            """)
        guard let row = result.first else { throw ErasureError.deliveryNotFound }
        let id: UUID = try row.decode("delivery_id")
        switch try row.decode(String.self, "outcome") {
        case "erased_now": return .erasedNow(deliveryID: id, at: try row.decode("erased_at"), by: try row.decode("erased_by"))
        case "already_erased": return .alreadyErased(deliveryID: id, at: try row.decode("erased_at"), by: try row.decode("erased_by"))
        case "pending": return .pending
        case "held": return .held
        case let other: throw PostgresError(.queryFailed, message: "countersign_erase_delivery answered \(other)")
        }
    }

    /// What setting a hold did.
    public enum HoldOutcome: Sendable, Equatable {
        case heldNow(LegalHold)
        /// The delivery was held already: its first hold stands.
        case alreadyHeld(heldBy: UUID, heldAt: Date)
        /// Nothing left to hold.
        case erased
    }

    /// Holds the delivery `reference` for `reason`, as the admin or auditor key of `credential`.
    public static func setHold(reference: String, reason: String, credential: ActorCredential?, in session: PostgresSession) async throws
        -> (deliveryID: UUID, outcome: HoldOutcome) {
        let result = try await session.query("""
            SELECT delivery_id, outcome, held_by, held_at
            FROM countersign_set_legal_hold(\(reference)::text, \(reason)::text, \(credential?.token)::text)
            """)
        guard let row = result.first else { throw ErasureError.deliveryNotFound }
        let id: UUID = try row.decode("delivery_id")
        switch try row.decode(String.self, "outcome") {
        case "held_now":
            return (id, .heldNow(LegalHold(reason: reason, heldBy: try row.decode("held_by"), heldAt: try row.decode("held_at"))))
        case "already_held": return (id, .alreadyHeld(heldBy: try row.decode("held_by"), heldAt: try row.decode("held_at")))
        case "erased": return (id, .erased)
        case let other: throw PostgresError(.queryFailed, message: "countersign_set_legal_hold answered \(other)")
        }
    }

    /// Clears the hold of `reference`, as the admin or auditor key of `credential`; whether there was one.
    public static func clearHold(reference: String, credential: ActorCredential?, in session: PostgresSession) async throws
        -> (deliveryID: UUID, cleared: Bool) {
        let result = try await session.query("""
            SELECT delivery_id, outcome FROM countersign_clear_legal_hold(\(reference)::text, \(credential?.token)::text)
            """)
        guard let row = result.first else { throw ErasureError.deliveryNotFound }
        return (try row.decode("delivery_id"), try row.decode(String.self, "outcome") == "cleared_now")
    }

    /// The hold of delivery `reference`, if it has one.
    public func hold(reference: String) async throws -> LegalHold? {
        try await database.query("""
            SELECT h.reason, h.held_by, h.held_at FROM delivery_legal_holds h JOIN deliveries d ON d.id = h.delivery_id
            WHERE d.reference = \(reference)::text
            """).first.map { row in
            LegalHold(reason: try row.decode("reason"), heldBy: try row.decode("held_by"), heldAt: try row.decode("held_at"))
        }
    }
}
