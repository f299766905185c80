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
    /// `metadata_commitment`: the proof facts committed under the delivery's salt (events since
    /// salted commitments, which bind no `metadata_sha256`).
    var metadataCommitment: Digest32? = nil
    /// The device key id (lower-case) and signature (hex) of a device-signed upload's event.
    var deviceKeyID: String? = nil
    var deviceSignature: String? = nil

    /// The proof id and digests of `event`, or nil when it is not a `proof_recorded` event naming a proof.
    static func of(_ event: AuditEvent) -> (UUID, RecordedEventDigests)? {
        guard event.action == AuditAction.proofRecorded.rawValue else { return nil }
        // The details are a string-valued object (else, as `AuditEvent.details` reads them, empty),
        // read in one pass over its members: a dictionary of them cost more than the parse.
        var id: UUID?
        var digests = RecordedEventDigests(seq: event.seq, chain: event.chain, subject: event.subject)
        let read: Void? = try? BundleJSONParser.read(event.detailsJSON.utf8) { (json) throws(BundleJSONError) in
            try json.readObject("the details", depth: 1) { (json, name) throws(BundleJSONError) in
                guard json.next == UInt8(ascii: "\"") else { throw BundleJSONError("a detail is not a string") }
                if json.token(name, is: "points_sha256") {
                    digests.points = try json.readDigest("points_sha256")
                } else if json.token(name, is: "png_sha256") {
                    digests.png = try json.readDigest("png_sha256")
                } else if json.token(name, is: "ink_sha256") {
                    digests.ink = try json.readDigest("ink_sha256")
                } else if json.token(name, is: "metadata_sha256") {
                    digests.metadata = try json.readDigest("metadata_sha256")
                } else if json.token(name, is: "metadata_commitment") {
                    digests.metadataCommitment = try json.readDigest("metadata_commitment")
                } else if json.token(name, is: "proof_id") {
                    // A proof_id that is not a UUID fails the read, so the event names no proof.
                    id = try json.readUUID("proof_id")
                } else if json.token(name, is: "device_key_id") {
                    digests.deviceKeyID = try json.readString("device_key_id")
                } else if json.token(name, is: "device_signature") {
                    digests.deviceSignature = try json.readString("device_signature")
                } else {
                    try json.skipValue(depth: 1)
                }
            }
        }
        guard read != nil else { return nil }
        guard let id else { return nil }
        return (id, digests)
    }
}
