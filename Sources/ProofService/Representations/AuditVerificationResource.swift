import ProofStore

/// The JSON form of a verification of the audit chains:
/// `{"status":"ok","count":N,"chains":[{"chain":0,"head_seq":S,"head_hash":"…"},…],"archived_proofs":A}` or
/// `{"status":"broken","seq":S,"chain":C,"kind":"…","expected":"…","found":"…","subject":"…","proof_id":"…"}`.
public struct AuditVerificationResource: Encodable, Sendable {
    /// The verification it describes.
    public var verification: AuditVerification

    /// Wraps a verification.
    public init(_ verification: AuditVerification) {
        self.verification = verification
    }

    enum CodingKeys: String, CodingKey {
        case status, count, chains, seq, chain, kind, expected, found, subject
        case proofID = "proof_id", archivedProofs = "archived_proofs"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch verification {
        case .ok(let count, let heads, let archived):
            try c.encode("ok", forKey: .status)
            try c.encode(count, forKey: .count)
            try c.encode(heads.map(ChainHeadResource.init), forKey: .chains)
            try c.encode(archived, forKey: .archivedProofs)
        case .broken(let failure):
            try c.encode("broken", forKey: .status)
            try c.encode(failure.seq, forKey: .seq)
            try c.encodeIfPresent(failure.chain, forKey: .chain)
            try c.encode(failure.kind.rawValue, forKey: .kind)
            try c.encode(failure.expected, forKey: .expected)
            try c.encode(failure.found, forKey: .found)
            try c.encodeIfPresent(failure.subject, forKey: .subject)
            try c.encodeIfPresent(failure.proofID, forKey: .proofID)
        }
    }
}
