import Foundation
import ProofService
import ProofStore

/// The JSON form of an audit event, with every field the hash covers (see `docs/audit.md`):
/// `encoding` names the canonical encoding (`countersign.audit/v1` or `/v2`), `chain` its chain.
struct AuditEventResource: Encodable {
    struct ActorResource: Encodable {
        var keyID: String?
        var role: String?
        enum CodingKeys: String, CodingKey {
            case role
            case keyID = "key_id"
        }
    }

    var event: AuditEvent

    enum CodingKeys: String, CodingKey {
        case seq, chain, encoding, actor, action, subject, details, hash
        case occurredAt = "occurred_at", occurredAtMicros = "occurred_at_us", requestID = "request_id",
             clientAddress = "client_address", userAgent = "user_agent", detailsText = "details_text", prevHash = "prev_hash"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event.seq, forKey: .seq)
        try c.encode(event.chain, forKey: .chain)
        try c.encode(event.encoding.tag, forKey: .encoding)
        try c.encode(RFC3339Timestamp.format(event.occurredAt), forKey: .occurredAt)
        try c.encode(event.occurredAtMicros, forKey: .occurredAtMicros)
        let actor = event.actorKeyID == nil && event.actorRole == nil
            ? nil : ActorResource(keyID: event.actorKeyID?.uuidString.lowercased(), role: event.actorRole)
        try c.encode(actor, forKey: .actor)
        try c.encode(event.action, forKey: .action)
        try c.encode(event.subject, forKey: .subject)
        try c.encode(event.requestID, forKey: .requestID)
        try c.encode(event.clientAddress, forKey: .clientAddress)
        try c.encode(event.userAgent, forKey: .userAgent)
        try c.encode(event.details, forKey: .details)
        try c.encode(event.detailsJSON, forKey: .detailsText)
        try c.encode(event.prevHash.hexString, forKey: .prevHash)
        try c.encode(event.hash.hexString, forKey: .hash)
    }
}
