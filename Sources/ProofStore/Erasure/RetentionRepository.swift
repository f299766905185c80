import Foundation
import Postgres

/// The retention policy and the erasures it makes due (migration 0027). The policy is written by
/// the owner only (`countersign migrate`, from `RETENTION_DAYS`), each change an audit event; the
/// runtime role reads it and erases through `countersign_erase_expired`, which picks the deliveries
/// itself: the runtime role chooses neither which nor under which rule.
public struct RetentionRepository: Sendable {
    let database: PostgresClient

    /// Creates the repository over `database` (the owner's, for ``setPolicy(_:origin:)``).
    public init(database: PostgresClient) {
        self.database = database
    }

    /// The policy stored in the database.
    public func policy() async throws -> RetentionPolicy {
        let result = try await database.query("SELECT days FROM retention_policy")
        return RetentionPolicy(days: try result.first?.decode(Int?.self, "days") ?? nil)
    }

    /// Stores `policy` (as the owner), with a `retention_policy_set` event when it changes the
    /// stored one; returns the policy it replaced (itself when nothing changed).
    @discardableResult
    public func setPolicy(_ policy: RetentionPolicy, origin: AuditOrigin = .system) async throws -> RetentionPolicy {
        try await database.withTransaction(retryingStalePlans: true) { session in
            let row = try await session.query("SELECT days FROM retention_policy FOR UPDATE").first
            let previous = RetentionPolicy(days: try row?.decode(Int?.self, "days") ?? nil)
            guard previous != policy else { return previous }
            try await session.query("UPDATE retention_policy SET days = \(policy.days), changed_at = now()")
            try await AuditLog.append(.retentionPolicySet, subject: "retention:policy",
                                      details: ["days": policy.days.map(String.init) ?? "none",
                                                "previous_days": previous.days.map(String.init) ?? "none"],
                                      origin: origin, in: session)
            return previous
        }
    }

    /// Erases up to `limit` deliveries the policy makes due, oldest first, each with its
    /// `delivery_erased` event (rule `retention`), in one transaction; returns their references
    /// (none: nothing is due, or there is no policy).
    public func eraseDue(limit: Int) async throws -> [String] {
        try await database.withTransaction(retryingStalePlans: true) { session in
            let rows = try await session.query("""
                SELECT delivery_id, reference, days FROM countersign_erase_expired(\(limit)::int)
                """).rows
            var entries: [AuditEntry] = []
            var references: [String] = []
            for row in rows {
                let (id, reference, days) = try row.decode((UUID, String, Int).self)
                references.append(reference)
                entries.append(AuditEntry(action: .deliveryErased, subject: "delivery:\(reference)",
                                          details: ["delivery_id": id.uuidString.lowercased(), "rule": "retention",
                                                    "reason": "retention policy: \(days) days after creation"],
                                          origin: .system))
            }
            if !entries.isEmpty { _ = try await AuditLog.append(entries, in: session) }
            return references
        }
    }
}
