import Foundation
import ProofStore

/// One line of an audit segment file (`audit/chain-CC/….ndjson`): an event with every field its
/// hash covers, as `GET /v1/audit/events` names them — `{"action", "actor_key_id", "actor_role",
/// "chain", "client_address", "details_text", "encoding" (the tag), "hash", "occurred_at_us",
/// "prev_hash", "request_id", "seq", "subject", "user_agent"}` — then `\n`. Read back strictly
/// by ``parse(_:)`` (``BundleJSONParser``).
struct BundleEventLine: Sendable {
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

    /// The line `bytes` (without its `\n`); the error names what is missing or mistyped.
    static func parse(_ bytes: some Collection<UInt8>) throws(BundleJSONError) -> BundleEventLine {
        let line = try BundleJSONParser.parse(bytes)
        _ = try line.members("an audit event")
        var actorKeyID: UUID?
        if let text = try line.optionalString("actor_key_id") {
            guard let id = UUID(text: text) else { throw BundleJSONError("actor_key_id is not a UUID") }
            actorKeyID = id
        }
        return BundleEventLine(action: try line.string("action"), actorKeyID: actorKeyID, actorRole: try line.optionalString("actor_role"),
                               chain: try line.int16("chain"), clientAddress: try line.optionalString("client_address"),
                               detailsText: try line.string("details_text"), encoding: try line.string("encoding"),
                               hash: try line.string("hash"), occurredAtMicros: try line.int64("occurred_at_us"),
                               prevHash: try line.string("prev_hash"), requestID: try line.optionalString("request_id"),
                               seq: try line.int64("seq"), subject: try line.string("subject"), userAgent: try line.optionalString("user_agent"))
    }

    /// The line of `event`.
    static func encode(_ event: AuditEvent) -> [UInt8] {
        var json = CanonicalJSONWriter(capacity: 512 + event.detailsJSON.utf8.count)
        json.beginObject()
        json.key("action"); json.string(event.action)
        json.key("actor_key_id"); json.string(event.actorKeyID?.lowercasedText)
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
