import ProofStore

/// The JSON form of a chain verification: `{"status":"ok","count":N,"head_hash":"…"}` or
/// `{"status":"broken","seq":S,"kind":"…","expected":"…","found":"…","subject":"…","proof_id":"…"}`.
public struct AuditVerificationResource: Encodable, Sendable {
    /// The verification it describes.
    public var verification: AuditVerification

    /// Wraps a verification.
    public init(_ verification: AuditVerification) {
        self.verification = verification
    }

    enum CodingKeys: String, CodingKey {
        case status, count, seq, kind, expected, found, subject
        case headHash = "head_hash", proofID = "proof_id"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch verification {
        case .ok(let count, let headHash):
            try c.encode("ok", forKey: .status)
            try c.encode(count, forKey: .count)
            try c.encode(headHash.hexString, forKey: .headHash)
        case .broken(let failure):
            try c.encode("broken", forKey: .status)
            try c.encode(failure.seq, forKey: .seq)
            try c.encode(failure.kind.rawValue, forKey: .kind)
            try c.encode(failure.expected, forKey: .expected)
            try c.encode(failure.found, forKey: .found)
            try c.encodeIfPresent(failure.subject, forKey: .subject)
            try c.encodeIfPresent(failure.proofID, forKey: .proofID)
        }
    }
}
