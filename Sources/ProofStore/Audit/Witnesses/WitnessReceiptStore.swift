import Foundation
import Postgres

/// Records witness receipts (insert-only) and lists stored checkpoints with theirs.
public struct WitnessReceiptStore: Sendable {
    let database: PostgresClient

    /// Creates the store over `database`.
    public init(database: PostgresClient) {
        self.database = database
    }

    /// Appends one receipt per element of `receipts` for checkpoint `checkpointID` (a few rows: one statement each).
    public func record(_ receipts: [WitnessReceipt], checkpointID: Int64) async throws {
        for receipt in receipts {
            let witness = String(receipt.witness.prefix(WitnessReceipt.maxTextLength))
            let detail = receipt.detail.map { String($0.prefix(WitnessReceipt.maxTextLength)) }
            _ = try await database.query("""
                INSERT INTO audit_checkpoint_witnesses (checkpoint_id, witness_kind, witness, succeeded, detail)
                VALUES (\(checkpointID), \(receipt.kind.rawValue), \(witness), \(receipt.succeeded), \(detail))
                """)
        }
    }

    /// Stored checkpoints with id > `afterID`, oldest first, at most `limit`, each with its receipts.
    public func page(afterID: Int64, limit: Int) async throws -> WitnessedCheckpointPage {
        let rows = try await database.query("""
            SELECT id, \(unescaped: AuditCheckpointStore.columns) FROM audit_checkpoints WHERE id > \(afterID)
            ORDER BY id LIMIT \(limit + 1)
            """).rows
        var items: [WitnessedCheckpointPage.Item] = []
        for row in rows.prefix(limit) {
            let stored = StoredCheckpoint(id: try row.decode(Int64.self, "id"), checkpoint: try AuditCheckpointStore.checkpoint(row))
            items.append(.init(stored: stored, receipts: []))
        }
        guard let first = items.first?.stored.id, let last = items.last?.stored.id else { return .init(items: [], nextID: nil) }
        let receiptRows = try await database.query("""
            SELECT checkpoint_id, witness_kind, witness, succeeded, detail, recorded_at FROM audit_checkpoint_witnesses
            WHERE checkpoint_id BETWEEN \(first) AND \(last) ORDER BY checkpoint_id, id
            """).rows
        var byCheckpoint: [Int64: [WitnessReceipt]] = [:]
        for row in receiptRows {
            let kind = WitnessReceipt.Kind(rawValue: try row.decode(String.self, "witness_kind")) ?? .directory
            let receipt = WitnessReceipt(kind: kind, witness: try row.decode("witness"), succeeded: try row.decode("succeeded"),
                                         detail: try row.decode("detail"),
                                         recordedAtMicros: try row.decode(AuditTimestamp.self, "recorded_at").micros)
            byCheckpoint[try row.decode(Int64.self, "checkpoint_id"), default: []].append(receipt)
        }
        for index in items.indices { items[index].receipts = byCheckpoint[items[index].stored.id] ?? [] }
        return .init(items: items, nextID: rows.count > limit ? last : nil)
    }
}
