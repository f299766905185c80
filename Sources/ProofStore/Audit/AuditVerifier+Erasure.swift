import Foundation
import Postgres

/// The checks of an erased delivery (migration 0026). Its events stay in the chain and their hashes
/// are checked as every event's; the facts they bound (names, address, ink, image, notes) are gone
/// on purpose, so their digests can no longer be re-derived. What is still checked: a proof row's
/// stored digests against its event (they stay), and that the erasure itself is recorded — an
/// `erased_at` set behind the service's back has no `delivery_erased` event and breaks the walk.
extension AuditVerifier {
    /// The subjects (`delivery:<reference>`) of the erased deliveries that `events` name.
    func erasedReferences(for events: [AuditEvent], in session: PostgresSession) async throws -> Set<String> {
        let references = Set(events.map(\.subject).filter { $0.hasPrefix("delivery:") }.map { String($0.dropFirst(9)) })
        guard !references.isEmpty else { return [] }
        // References are `A-Z a-z 0-9 . _ : -` (migration 0011): a comma separates them safely.
        let rows = try await session.query("""
            SELECT reference::text AS reference FROM deliveries
            WHERE reference = ANY(string_to_array(\(references.sorted().joined(separator: ",")), ',')) AND erased_at IS NOT NULL
            """).rows
        return Set(try rows.map { "delivery:" + (try $0.decode(String.self, "reference")) })
    }

    /// The actions whose details bind facts an erasure removes: for an erased delivery, their
    /// events are checked by hash and link only (a proof's also by its stored digests).
    static let erasedFactActions: Set<String> = Set([AuditAction.deliveryCreated.rawValue, AuditAction.attemptRecorded.rawValue,
                                                     AuditAction.proofRecorded.rawValue, AuditAction.deliveryErased.rawValue])
        .union(closingActions)

    /// The check of a `proof_recorded` event of an erased delivery, whose chain link already held:
    /// the row's stored digests must still be the event's.
    func checkErasedProof(_ event: AuditEvent, digests: [UUID: ProofDigests]) -> AuditBreak? {
        let proofText = event.details["proof_id"] ?? ""
        guard let proofID = UUID(uuidString: proofText), let stored = digests[proofID] else {
            return AuditBreak(seq: event.seq, kind: .proofMissing, expected: proofText, found: "", subject: event.subject,
                              proofID: proofText, chain: event.chain)
        }
        for (recorded, found, kind) in [(event.details["points_sha256"] ?? "", stored.storedBody.hexString, AuditBreak.Kind.proofBodyMismatch),
                                        (event.details["png_sha256"] ?? "", stored.storedPNG.hexString, .proofPNGMismatch)]
            where recorded != found {
            return AuditBreak(seq: event.seq, kind: kind, expected: recorded, found: found, subject: event.subject, proofID: proofText,
                              chain: event.chain)
        }
        return nil
    }

    /// Every erased delivery has its `delivery_erased` event (`erasure_without_event`).
    func checkEveryErasureHasEvent(in session: PostgresSession) async throws -> AuditBreak? {
        guard let row = try await Self.withAntiJoinPlans(in: session, {
            try await session.query("""
                SELECT d.reference::text AS reference FROM deliveries d
                WHERE d.erased_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM audit_events e
                    WHERE e.action = 'delivery_erased' AND e.details ->> 'delivery_id' = d.id::text)
                LIMIT 1
                """).first
        }) else { return nil }
        let reference: String = try row.decode("reference")
        return AuditBreak(seq: 0, kind: .erasureWithoutEvent, expected: "a delivery_erased event", found: "none",
                          subject: "delivery:" + reference)
    }
}
