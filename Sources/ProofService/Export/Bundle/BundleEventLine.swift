import Foundation
import ProofStore

/// One line of an audit segment file (`audit/chain-CC/….ndjson`): an event with every field its
/// hash covers, as `GET /v1/audit/events` names them — `{"action", "actor_key_id", "actor_role",
/// "chain", "client_address", "details_text", "encoding" (the tag), "hash", "occurred_at_us",
/// "prev_hash", "request_id", "seq", "subject", "user_agent"}` — then `\n`.
struct BundleEventLine: Decodable {
    var action: String
    var actorKeyID: UUID?
    var actorRole: String?
    var chain: Int16
    var clientAddress: String?
    var detailsText: String
    var encoding: String
    var hash: String
    var occurredAtMicros: Int64
    var prevHash: String
    var requestID: String?
    var seq: Int64
    var subject: String
    var userAgent: String?

    enum CodingKeys: String, CodingKey {
        case action, chain, encoding, hash, seq, subject
        case actorKeyID = "actor_key_id", actorRole = "actor_role", clientAddress = "client_address", detailsText = "details_text"
        case occurredAtMicros = "occurred_at_us", prevHash = "prev_hash", requestID = "request_id", userAgent = "user_agent"
    }

    /// The line of `event`.
    static func encode(_ event: AuditEvent) -> [UInt8] {
        var json = CanonicalJSONWriter(capacity: 512 + event.detailsJSON.utf8.count)
        json.beginObject()
        json.key("action"); json.string(event.action)
        json.key("actor_key_id"); json.string(event.actorKeyID?.uuidString.lowercased())
        json.key("actor_role"); json.string(event.actorRole)
        json.key("chain"); json.int(Int64(event.chain))
        json.key("client_address"); json.string(event.clientAddress)
        json.key("details_text"); json.string(event.detailsJSON)
        json.key("encoding"); json.string(event.encoding.tag)
        json.key("hash"); json.string(event.hash.hexString)
        json.key("occurred_at_us"); json.int(event.occurredAtMicros)
        json.key("prev_hash"); json.string(event.prevHash.hexString)
        json.key("request_id"); json.string(event.requestID)
        json.key("seq"); json.int(event.seq)
        json.key("subject"); json.string(event.subject)
        json.key("user_agent"); json.string(event.userAgent)
        json.endObject()
        return json.bytes + [0x0A]
    }

    /// The event a line states, or nil when a hash is not 64 hex digits or the encoding is unknown.
    var event: AuditEvent? {
        guard let hash = Digest32(hex: hash), let prev = Digest32(hex: prevHash),
              let encoding = AuditEvent.Encoding.allCases.first(where: { $0.tag == encoding }) else { return nil }
        return AuditEvent(seq: seq, occurredAtMicros: occurredAtMicros, actorKeyID: actorKeyID, actorRole: actorRole, action: action,
                          subject: subject, requestID: requestID, clientAddress: clientAddress, userAgent: userAgent,
                          detailsJSON: detailsText, prevHash: prev.bytes, hash: hash.bytes, chain: chain, encoding: encoding)
    }
}
