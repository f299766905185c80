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
        // The details are a string-valued object (else, as `AuditEvent.details` reads them, empty),
        // read in one pass over its members: a dictionary of them cost more than the parse.
        guard let members = try? BundleJSONParser.parse(event.detailsJSON.utf8).members("details") else { return nil }
        var id: UUID?
        var digests = RecordedEventDigests(seq: event.seq, chain: event.chain, subject: event.subject)
        for (name, member) in members {
            guard case .string(let text) = member else { return nil }
            switch name {
            case "proof_id": id = UUID(text: text)
            case "points_sha256": digests.points = Digest32(hex: text)
            case "png_sha256": digests.png = Digest32(hex: text)
            case "ink_sha256": digests.ink = Digest32(hex: text)
            case "metadata_sha256": digests.metadata = Digest32(hex: text)
            case "device_key_id": digests.deviceKeyID = text
            case "device_signature": digests.deviceSignature = text
            default: break
            }
        }
        guard let id else { return nil }
        return (id, digests)
    }
}
