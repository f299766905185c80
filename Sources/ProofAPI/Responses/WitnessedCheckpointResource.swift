import Foundation
import ProofService
import ProofStore

/// One stored checkpoint as `GET /v1/audit/checkpoints` lists it:
/// `{"id":N,"checkpoint":{…as GET /v1/audit/checkpoint…},"witness_status":"witnessed"|"partial"|"failed"|"none",
/// "witnesses":[{"kind":"directory"|"http"|"tsa","witness":"…","succeeded":true,"detail":"…","recorded_at":"…"}]}`.
///
/// `witness_status` summarises the latest receipt of each witness: all succeeded (`witnessed`), some
/// (`partial`), none (`failed`), or no receipt at all (`none`: signed on request or by an export,
/// or before witnesses were configured). The receipts are the service's own report; an auditor
/// checks the witnesses' copies with `countersign verify --database --checkpoints DIR`.
struct WitnessedCheckpointResource: Encodable {
    struct Receipt: Encodable {
        var receipt: WitnessReceipt

        enum CodingKeys: String, CodingKey {
            case kind, witness, succeeded, detail
            case recordedAt = "recorded_at"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(receipt.kind.rawValue, forKey: .kind)
            try c.encode(receipt.witness, forKey: .witness)
            try c.encode(receipt.succeeded, forKey: .succeeded)
            try c.encode(receipt.detail, forKey: .detail)
            try c.encode(RFC3339Timestamp.format(Date(timeIntervalSince1970: Double(receipt.recordedAtMicros) / 1_000_000)), forKey: .recordedAt)
        }
    }

    var item: WitnessedCheckpointPage.Item

    enum CodingKeys: String, CodingKey {
        case id, checkpoint, witnesses
        case witnessStatus = "witness_status"
    }

    /// The summary of the latest receipt per (kind, witness).
    var status: String {
        var latest: [String: Bool] = [:]
        for receipt in item.receipts { latest[receipt.kind.rawValue + " " + receipt.witness] = receipt.succeeded }
        if latest.isEmpty { return "none" }
        if latest.values.allSatisfy({ $0 }) { return "witnessed" }
        return latest.values.contains(true) ? "partial" : "failed"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(item.stored.id, forKey: .id)
        try c.encode(CheckpointResource(item.stored.checkpoint), forKey: .checkpoint)
        try c.encode(status, forKey: .witnessStatus)
        try c.encode(item.receipts.map(Receipt.init), forKey: .witnesses)
    }
}
