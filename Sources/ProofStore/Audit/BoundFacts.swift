import Foundation

/// What a row's facts give for the value an event bound: their plain digest, and the commitment
/// to it under the delivery's salt when the delivery has a data key (docs/audit.md, "Salted
/// commitments"). An event binds one of the two, `<name>_sha256` (written before salts, or for a
/// delivery stored without a data key) or `<name>_commitment`.
struct BoundFacts {
    var digest: [UInt8]
    var commitment: [UInt8]?

    /// The facts whose digest is `digest`, committed with `salt` when there is one.
    init(digest: [UInt8], salt: CommitmentSalt?) throws(SealingError) {
        self.digest = digest
        commitment = try salt?.commit(digest)
    }

    /// What the event's `details` bind under `name` and what these facts give for it (`found` nil:
    /// the delivery has no data key left to commit with); nil when the event binds neither.
    func compare(_ details: [String: String], _ name: String) -> (recorded: String, found: String?)? {
        if let recorded = details[name + "_commitment"] { return (recorded, commitment?.hexString) }
        if let recorded = details[name + "_sha256"] { return (recorded, digest.hexString) }
        return nil
    }

    /// What an event's `details` bind under `name` (the commitment, else the digest; empty: neither).
    static func recorded(_ details: [String: String], _ name: String) -> String {
        details[name + "_commitment"] ?? details[name + "_sha256"] ?? ""
    }

    /// Whether an event's `details` bind facts under `name` at all.
    static func binds(_ details: [String: String], _ name: String) -> Bool {
        !recorded(details, name).isEmpty
    }
}
