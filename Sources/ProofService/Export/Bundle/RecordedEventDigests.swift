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
        // The details are a string-valued object (else, as `AuditEvent.details` reads them, empty).
        guard let details = try? stringMembers(BundleJSONParser.parse(event.detailsJSON.utf8)) else { return nil }
        guard let id = details["proof_id"].flatMap(UUID.init(text:)) else { return nil }
        return (id, RecordedEventDigests(seq: event.seq, chain: event.chain, subject: event.subject,
                                         points: details["points_sha256"].flatMap(Digest32.init(hex:)),
                                         png: details["png_sha256"].flatMap(Digest32.init(hex:)),
                                         ink: details["ink_sha256"].flatMap(Digest32.init(hex:)),
                                         metadata: details["metadata_sha256"].flatMap(Digest32.init(hex:)),
                                         deviceKeyID: details["device_key_id"], deviceSignature: details["device_signature"]))
    }

    /// An object whose members are all strings, as a dictionary.
    private static func stringMembers(_ value: BundleJSONValue) throws(BundleJSONError) -> [String: String] {
        var out: [String: String] = [:]
        for (name, member) in try value.members("details") {
            guard case .string(let text) = member else { throw BundleJSONError("details.\(name) is not a string") }
            out[name] = text
        }
        return out
    }
}
