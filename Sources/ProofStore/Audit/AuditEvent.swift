import Cryptography
import Foundation

/// One stored audit event: a link of one of the hash chains described in `docs/audit.md`.
public struct AuditEvent: Sendable, Equatable {
    /// The canonical encodings an event's hash can use.
    public enum Encoding: Int16, Sendable, CaseIterable {
        /// `countersign.audit/v1`: events from before the chains (migration 0009), all on chain 0.
        case v1 = 1
        /// `countersign.audit/v2`: also hashes the chain number.
        case v2 = 2

        /// The tag that starts the canonical bytes.
        public var tag: String { self == .v1 ? "countersign.audit/v1" : "countersign.audit/v2" }
    }

    /// The global sequence number: unique, increasing along every chain, with gaps.
    public var seq: Int64
    /// The chain this event links into (see ``AuditLog/chain(for:)``).
    public var chain: Int16
    /// Which canonical encoding ``hash`` covers.
    public var encoding: Encoding
    /// When the event was appended, in whole microseconds since the Unix epoch.
    public var occurredAtMicros: Int64
    /// The API key that acted (`nil` for the CLI or the system).
    public var actorKeyID: UUID?
    /// The role it acted under: a ``Role`` raw value, `cli` or `system`.
    public var actorRole: String?
    /// What happened, e.g. `proof_recorded` (see ``AuditAction``).
    public var action: String
    /// What it happened to, e.g. `delivery:REF-1` or `key:<uuid>`.
    public var subject: String
    /// The request id, when the event came from an HTTP request.
    public var requestID: String?
    /// The caller's address, when known.
    public var clientAddress: String?
    /// The caller's User-Agent, when known.
    public var userAgent: String?
    /// The exact JSON text that was hashed (an object whose values are strings).
    public var detailsJSON: String
    /// The previous event's hash in the same chain (32 zero bytes for a chain's first event).
    public var prevHash: [UInt8]
    /// `SHA-256(prevHash || canonicalBytes)`.
    public var hash: [UInt8]

    /// Creates an event value (the log makes them; tests and tools rebuild them to recompute hashes).
    public init(seq: Int64, occurredAtMicros: Int64, actorKeyID: UUID?, actorRole: String?, action: String, subject: String,
                requestID: String?, clientAddress: String?, userAgent: String?, detailsJSON: String, prevHash: [UInt8], hash: [UInt8],
                chain: Int16 = 0, encoding: Encoding = .v2) {
        self.seq = seq
        self.chain = chain
        self.encoding = encoding
        self.occurredAtMicros = occurredAtMicros
        self.actorKeyID = actorKeyID
        self.actorRole = actorRole
        self.action = action
        self.subject = subject
        self.requestID = requestID
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.detailsJSON = detailsJSON
        self.prevHash = prevHash
        self.hash = hash
    }

    /// When the event was appended.
    public var occurredAt: Date { Date(timeIntervalSince1970: Double(occurredAtMicros) / 1_000_000) }

    /// The details as a dictionary (empty when the stored text is not an object of strings, or
    /// names a member twice: ``AuditDetailsJSON/decode(_:)``).
    public var details: [String: String] {
        AuditDetailsJSON.decode(detailsJSON) ?? [:]
    }

    /// The hash of every chain's first event's predecessor.
    public static let genesisHash = [UInt8](repeating: 0, count: 32)

    /// The canonical bytes of an event (everything but the hashes), as documented in `docs/audit.md`:
    /// the tag, (v2 only: the chain as a 2-byte big-endian integer,) seq and time as 8-byte
    /// big-endian integers, then each optional text field as `0x00` (null) or `0x01` + 4-byte
    /// big-endian length + UTF-8 bytes, in a fixed order.
    public static func canonicalBytes(encoding: Encoding = .v2, chain: Int16 = 0, seq: Int64, occurredAtMicros: Int64, actorKeyID: UUID?,
                                      actorRole: String?, action: String, subject: String, requestID: String?, clientAddress: String?,
                                      userAgent: String?, detailsJSON: String) -> [UInt8] {
        // Sized once: every upload and every verified event encodes one, and growing cost several copies.
        var out = CanonicalEncoder(capacity: 256 + detailsJSON.utf8.count + (userAgent?.utf8.count ?? 0) + subject.utf8.count)
        out.text(encoding.tag)
        if encoding == .v2 { out.int16(chain) }
        out.int64(seq)
        out.int64(occurredAtMicros)
        out.text(actorKeyID?.lowercasedText)
        out.text(actorRole)
        out.text(action)
        out.text(subject)
        out.text(requestID)
        out.text(clientAddress)
        out.text(userAgent)
        out.text(detailsJSON)
        return out.bytes
    }

    /// `SHA-256(prevHash || canonicalBytes(...))`.
    public static func chainHash(prevHash: [UInt8], canonical: [UInt8]) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(prevHash)
        hasher.update(canonical)
        return hasher.finalize()
    }

    /// This event's canonical bytes.
    public var canonicalBytes: [UInt8] {
        Self.canonicalBytes(encoding: encoding, chain: chain, seq: seq, occurredAtMicros: occurredAtMicros, actorKeyID: actorKeyID, actorRole: actorRole,
                            action: action, subject: subject, requestID: requestID, clientAddress: clientAddress,
                            userAgent: userAgent, detailsJSON: detailsJSON)
    }

    /// The hash this event should carry given its ``prevHash``.
    public var recomputedHash: [UInt8] { Self.chainHash(prevHash: prevHash, canonical: canonicalBytes) }
}
