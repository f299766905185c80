import ProofStore

/// The JSON form of a verification of the audit chains:
/// `{"status":"ok","count":N,"chains":[{"chain":0,"head_seq":S,"head_hash":"…"},…],"archived_proofs":A}` or
/// `{"status":"broken","seq":S,"chain":C,"kind":"…","expected":"…","found":"…","subject":"…","proof_id":"…"}`.
/// With witnessed checkpoints (`verify --checkpoints`), also `"witnesses":{"checked":N,"started_after":"<file>",
/// "timestamped":N,"unwitnessed":{"since":"<file>","signed_at_us":T,"events":E,"seconds":S}}` (`timestamped` with `--tsa-ca`).
public struct AuditVerificationResource: Encodable, Sendable {
    /// The verification it describes.
    public var verification: AuditVerification

    /// Wraps a verification.
    public init(_ verification: AuditVerification) {
        self.verification = verification
    }

    /// What the witnesses added, when any were checked.
    public var witnesses: AuditVerificationReport?

    /// Wraps a verification against witnessed checkpoints.
    public init(report: AuditVerificationReport) {
        self.verification = report.result
        self.witnesses = report
        self.erasedDeliveries = report.erasedDeliveries
    }

    /// The references of the erased deliveries the walk passed (shown when the chains hold).
    public var erasedDeliveries: [String] = []

    enum WitnessKeys: String, CodingKey {
        case checked, unwitnessed, timestamped
        case startedAfter = "started_after"
    }

    enum WindowKeys: String, CodingKey {
        case since, events, seconds
        case signedAtUs = "signed_at_us"
    }

    enum CodingKeys: String, CodingKey {
        case status, count, chains, seq, chain, kind, expected, found, subject
        case witnesses
        case proofID = "proof_id", archivedProofs = "archived_proofs", erasedDeliveries = "erased_deliveries"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch verification {
        case .ok(let count, let heads, let archived):
            try c.encode("ok", forKey: .status)
            try c.encode(count, forKey: .count)
            try c.encode(heads.map(ChainHeadResource.init), forKey: .chains)
            try c.encode(archived, forKey: .archivedProofs)
            if !erasedDeliveries.isEmpty { try c.encode(erasedDeliveries, forKey: .erasedDeliveries) }
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
        if let witnesses {
            var w = c.nestedContainer(keyedBy: WitnessKeys.self, forKey: .witnesses)
            try w.encode(witnesses.witnessedChecked, forKey: .checked)
            try w.encodeIfPresent(witnesses.startedAfter, forKey: .startedAfter)
            try w.encodeIfPresent(witnesses.timestamped, forKey: .timestamped)
            if let window = witnesses.window {
                var u = w.nestedContainer(keyedBy: WindowKeys.self, forKey: .unwitnessed)
                try u.encode(window.since, forKey: .since)
                try u.encode(window.signedAtMicros, forKey: .signedAtUs)
                try u.encode(window.events, forKey: .events)
                try u.encode(window.seconds.rounded(), forKey: .seconds)
            }
        }
    }
}
