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
    /// Nil when not 64 hex digits (then the line states no event).
    var hash: Digest32?
    var occurredAtMicros: Int64
    /// Nil when not 64 hex digits.
    var prevHash: Digest32?
    var requestID: String?
    var seq: Int64
    var subject: String
    var userAgent: String?

    /// The line `bytes` (without its `\n`), read in one pass (``BundleJSONParser/read(_:_:)``);
    /// the error names what is missing or mistyped. Members it does not know are skipped, still checked.
    static func parse(_ bytes: some Collection<UInt8>) throws(BundleJSONError) -> BundleEventLine {
        try BundleJSONParser.read(bytes) { (json) throws(BundleJSONError) in
            var action: String?, actorKeyID: UUID?, actorRole: String?, chain: Int16?, clientAddress: String?, detailsText: String?
            var encoding: String?, hash: Digest32??, occurredAtMicros: Int64?, prevHash: Digest32??, requestID: String?, seq: Int64?
            var subject: String?, userAgent: String?
            try json.readObject("an audit event", depth: 1) { (json, name) throws(BundleJSONError) in
                if json.token(name, is: "action") {
                    action = try json.readString("action")
                } else if json.token(name, is: "actor_key_id") {
                    actorKeyID = try json.readNull() ? nil : try json.readUUID("actor_key_id")
                } else if json.token(name, is: "actor_role") {
                    actorRole = try json.readOptionalString("actor_role")
                } else if json.token(name, is: "chain") {
                    guard let value = Int16(exactly: try json.readInt64("chain")) else { throw BundleJSONError("chain is out of range") }
                    chain = value
                } else if json.token(name, is: "client_address") {
                    clientAddress = try json.readOptionalString("client_address")
                } else if json.token(name, is: "details_text") {
                    detailsText = try json.readString("details_text")
                } else if json.token(name, is: "encoding") {
                    encoding = try json.readString("encoding")
                } else if json.token(name, is: "hash") {
                    hash = .some(try json.readDigest("hash"))
                } else if json.token(name, is: "occurred_at_us") {
                    occurredAtMicros = try json.readInt64("occurred_at_us")
                } else if json.token(name, is: "prev_hash") {
                    prevHash = .some(try json.readDigest("prev_hash"))
                } else if json.token(name, is: "request_id") {
                    requestID = try json.readOptionalString("request_id")
                } else if json.token(name, is: "seq") {
                    seq = try json.readInt64("seq")
                } else if json.token(name, is: "subject") {
                    subject = try json.readString("subject")
                } else if json.token(name, is: "user_agent") {
                    userAgent = try json.readOptionalString("user_agent")
                } else {
                    try json.skipValue(depth: 1)
                }
            }
            return BundleEventLine(action: try required(action, "action"), actorKeyID: actorKeyID, actorRole: actorRole,
                                   chain: try required(chain, "chain"), clientAddress: clientAddress,
                                   detailsText: try required(detailsText, "details_text"), encoding: try required(encoding, "encoding"),
                                   hash: try required(hash, "hash"), occurredAtMicros: try required(occurredAtMicros, "occurred_at_us"),
                                   prevHash: try required(prevHash, "prev_hash"), requestID: requestID, seq: try required(seq, "seq"),
                                   subject: try required(subject, "subject"), userAgent: userAgent)
        }
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
        guard let hash, let prev = prevHash,
              let encoding = AuditEvent.Encoding.allCases.first(where: { $0.tag == encoding }) else { return nil }
        return AuditEvent(seq: seq, occurredAtMicros: occurredAtMicros, actorKeyID: actorKeyID, actorRole: actorRole, action: action,
                          subject: subject, requestID: requestID, clientAddress: clientAddress, userAgent: userAgent,
                          detailsJSON: detailsText, prevHash: prev.bytes, hash: hash.bytes, chain: chain, encoding: encoding)
    }
}
