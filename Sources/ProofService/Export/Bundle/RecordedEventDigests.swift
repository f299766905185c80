import Foundation
import ProofStore

/// What one `proof_recorded` event binds, held compactly (inline digests): the verifier keeps one
/// per proof of the bundle's audit segments while it reads the proofs.
struct RecordedEventDigests: Sendable {
    var seq: Int64
    var chain: Int16
    var subject: String
    var points: Digest32?
    var png: Digest32?
    /// Absent in events from before the facts were bound.
    var ink: Digest32?
    var metadata: Digest32?
    /// The device key id (lower-case) and signature (hex) of a device-signed upload's event.
    var deviceKeyID: String? = nil
    var deviceSignature: String? = nil

    /// The proof id and digests of `event`, or nil when it is not a `proof_recorded` event naming a proof.
    static func of(_ event: AuditEvent) -> (UUID, RecordedEventDigests)? {
        guard event.action == AuditAction.proofRecorded.rawValue else { return nil }
        let details = event.details
        guard let id = details["proof_id"].flatMap(UUID.init(uuidString:)) else { return nil }
        return (id, RecordedEventDigests(seq: event.seq, chain: event.chain, subject: event.subject,
                                         points: details["points_sha256"].flatMap(Digest32.init(hex:)),
                                         png: details["png_sha256"].flatMap(Digest32.init(hex:)),
                                         ink: details["ink_sha256"].flatMap(Digest32.init(hex:)),
                                         metadata: details["metadata_sha256"].flatMap(Digest32.init(hex:)),
                                         deviceKeyID: details["device_key_id"], deviceSignature: details["device_signature"]))
    }
}
