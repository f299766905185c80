import Cryptography
import Foundation
import Postgres

/// The device-key checks of the walk (migration 0017): a device-signed proof still carries the key
/// and signature its `proof_recorded` event bound, the signature verifies over the recorded body
/// and delivery with the public key the key's `device_key_registered` event bound, the key was
/// approved (and not revoked) before the proof's event, and every device key row still holds the
/// public key and owner its events bound.
extension AuditVerifier {
    /// What the page's device checks need: the key rows and the keys' own events.
    struct DeviceEvidence {
        struct Row {
            var registeredBy: UUID
            var publicKey: [UInt8]
        }

        struct KeyEvents {
            /// The registration event's `public_key` and `registered_by`.
            var registered: (seq: Int64, publicKey: String, registeredBy: String)?
            var approvedSeq: Int64?
            var revokedSeq: Int64?
        }

        var rows: [UUID: Row] = [:]
        var events: [UUID: KeyEvents] = [:]
    }

    /// The rows and events of every device key the page's events name (signed proofs and the keys' own events).
    func deviceEvidence(for events: [AuditEvent], digests: [UUID: ProofDigests], in session: PostgresSession) async throws -> DeviceEvidence {
        var ids = Set<UUID>()
        for event in events {
            if event.action == AuditAction.proofRecorded.rawValue, let id = event.details["device_key_id"].flatMap(UUID.init(uuidString:)) {
                ids.insert(id)
            } else if event.subject.hasPrefix("device_key:"), let id = UUID(uuidString: String(event.subject.dropFirst(11))) {
                ids.insert(id)
            }
        }
        ids.formUnion(digests.values.compactMap(\.deviceKeyID))
        guard !ids.isEmpty else { return DeviceEvidence() }
        let idList = ids.map { $0.uuidString.lowercased() }.joined(separator: ",")
        var evidence = DeviceEvidence()
        for row in try await session.query("""
            SELECT id, registered_by, public_key FROM device_keys WHERE id = ANY(string_to_array(\(idList), ',')::uuid[])
            """).rows {
            evidence.rows[try row.decode("id")] = DeviceEvidence.Row(registeredBy: try row.decode("registered_by"),
                                                                     publicKey: try row.decode("public_key"))
        }
        let subjects = ids.map { "device_key:" + $0.uuidString.lowercased() }.joined(separator: ",")
        for row in try await session.query("""
            SELECT seq, action, subject, details ->> 'public_key' AS public_key, details ->> 'registered_by' AS registered_by
            FROM audit_events WHERE subject = ANY(string_to_array(\(subjects), ','))
              AND action IN ('device_key_registered', 'device_key_approved', 'device_key_revoked')
            ORDER BY seq
            """).rows {
            let subject: String = try row.decode("subject")
            guard let id = UUID(uuidString: String(subject.dropFirst(11))) else { continue }
            let seq: Int64 = try row.decode("seq")
            var keyEvents = evidence.events[id] ?? DeviceEvidence.KeyEvents()
            switch try row.decode(String.self, "action") {
            case AuditAction.deviceKeyRegistered.rawValue:
                if keyEvents.registered == nil {
                    keyEvents.registered = (seq, try row.decode(String?.self, "public_key") ?? "", try row.decode(String?.self, "registered_by") ?? "")
                }
            case AuditAction.deviceKeyApproved.rawValue: keyEvents.approvedSeq = keyEvents.approvedSeq ?? seq
            default: keyEvents.revokedSeq = keyEvents.revokedSeq ?? seq
            }
            evidence.events[id] = keyEvents
        }
        return evidence
    }

    /// A device key's own event: the row must still hold the public key (and owner) it bound.
    func checkDeviceKeyEvent(_ event: AuditEvent, evidence: DeviceEvidence) -> AuditBreak? {
        guard let id = UUID(uuidString: String(event.subject.dropFirst(11))) else { return nil }
        let recorded = event.details["public_key"] ?? ""
        guard let row = evidence.rows[id] else {
            return AuditBreak(seq: event.seq, kind: .deviceKeyMismatch, expected: recorded, found: "no device key row", subject: event.subject,
                              chain: event.chain)
        }
        if row.publicKey.hexString != recorded {
            return AuditBreak(seq: event.seq, kind: .deviceKeyMismatch, expected: recorded, found: row.publicKey.hexString,
                              subject: event.subject, chain: event.chain)
        }
        if let owner = event.details["registered_by"], owner != row.registeredBy.uuidString.lowercased() {
            return AuditBreak(seq: event.seq, kind: .deviceKeyMismatch, expected: "registered by \(owner)",
                              found: "registered by \(row.registeredBy.uuidString.lowercased())", subject: event.subject, chain: event.chain)
        }
        return nil
    }

    /// A `proof_recorded` event's device checks, once the body, PNG and facts held.
    func checkDevice(_ event: AuditEvent, stored: ProofDigests, proofID: String, evidence: DeviceEvidence) -> AuditBreak? {
        func failure(_ kind: AuditBreak.Kind, _ expected: String, _ found: String) -> AuditBreak {
            AuditBreak(seq: event.seq, kind: kind, expected: expected, found: found, subject: event.subject, proofID: proofID, chain: event.chain)
        }
        let details = event.details
        let recordedKey = details["device_key_id"], recordedSignature = details["device_signature"]
        let storedKey = stored.deviceKeyID?.uuidString.lowercased(), storedSignature = stored.deviceSignature?.hexString
        if recordedKey != storedKey || recordedSignature != storedSignature {
            return failure(.proofDeviceMismatch, "\(recordedKey ?? "unsigned") \(recordedSignature ?? "")",
                           "\(storedKey ?? "unsigned") \(storedSignature ?? "")")
        }
        guard let keyText = recordedKey, let keyID = UUID(uuidString: keyText), let signatureText = recordedSignature else { return nil }
        guard let registered = evidence.events[keyID]?.registered, let publicKeyBytes = Hex.decode(registered.publicKey) else {
            return failure(.deviceSignatureInvalid, "a device_key_registered event for \(keyText)", "none")
        }
        // A registered key that is not canonical, off the curve or of small order (one registered
        // before those were refused) proves no signer: a constant signature verifies under it.
        let publicKey: Ed25519PublicKey
        do {
            publicKey = try Ed25519PublicKey(rawRepresentation: publicKeyBytes)
        } catch {
            return failure(.deviceSignatureInvalid, "a usable Ed25519 public key registered for \(keyText)",
                           "\(registered.publicKey): \(error.message)")
        }
        if let row = evidence.rows[keyID], row.publicKey != publicKeyBytes {
            return failure(.deviceKeyMismatch, registered.publicKey, row.publicKey.hexString)
        }
        let uploader = stored.uploadedBy.uuidString.lowercased()
        if registered.registeredBy != uploader {
            return failure(.deviceKeyMismatch, "key registered by the uploader \(uploader)", "registered by \(registered.registeredBy)")
        }
        let keyEvents = evidence.events[keyID]
        guard let approved = keyEvents?.approvedSeq, approved < event.seq else {
            return failure(.deviceKeyNotApproved, "approved before event \(event.seq)", keyEvents?.approvedSeq.map { "approved at event \($0)" } ?? "never approved")
        }
        if let revoked = keyEvents?.revokedSeq, revoked < event.seq {
            return failure(.deviceKeyNotApproved, "not revoked before event \(event.seq)", "revoked at event \(revoked)")
        }
        let message = DeviceUploadMessage.bytes(reference: String(event.subject.dropFirst(9)), keyID: keyID,
                                                bodySHA256: Hex.decode(details["points_sha256"] ?? "") ?? [])
        guard let signature = Hex.decode(signatureText), publicKey.isValidSignature(signature, for: message) else {
            return failure(.deviceSignatureInvalid, "a valid signature by \(publicKey.keyID)", signatureText)
        }
        return nil
    }
}
