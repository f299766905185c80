import Cryptography
import Foundation
import ProofStore

/// Checks one proof's folder of a version 3 bundle: `metadata.json` against the folder's other
/// files (sizes and SHA-256), and against the proof's `proof_recorded` event (the original body,
/// PNG and canonical ink digests, the recomputed proof facts digest, the delivery). The exporter
/// runs it on every proof before signing (and refuses to sign on a failure); the verifier runs it
/// on every proof it reads. Every failure names the file it concerns.
enum BundleProofCheck {
    /// A file of the folder as read: its size and SHA-256.
    struct FileFacts: Sendable {
        var bytes: Int
        var sha256: Digest32
    }

    /// The folder's files besides `metadata.json`, by name: one slot per file a proof has (a
    /// dictionary hashed each name several times per proof on the verifier's serial thread).
    struct Files: Sendable {
        private var png, svg, points, ink: FileFacts?

        init() {}

        /// The file `name`; only the names of ``BundleLayout/proofFiles`` after `metadata.json` hold one.
        subscript(name: String) -> FileFacts? {
            get {
                switch name {
                case "signature.png": png
                case "signature.svg": svg
                case "points": points
                case "ink": ink
                default: nil
                }
            }
            set {
                switch name {
                case "signature.png": png = newValue
                case "signature.svg": svg = newValue
                case "points": points = newValue
                case "ink": ink = newValue
                default: preconditionFailure("\(name) is not a file of a proof: callers report those before")
                }
            }
        }
    }

    /// A `metadata.json` read: the costly part of a check, which the verifier does for many
    /// folders at once on all cores (``read(_:)``).
    /// A class: the verifier hands each one from a worker through its batch to the serial check,
    /// and copying the read document at every step cost more than sharing it.
    final class Metadata: Sendable {
        let document: Result<BundleProofReading, BundleJSONError>

        init(document: Result<BundleProofReading, BundleJSONError>) {
            self.document = document
        }

        static func read(_ bytes: some Collection<UInt8>) -> Metadata {
            Metadata(document: Result { () throws(BundleJSONError) in try BundleProofReading.parse(bytes) })
        }
    }

    /// What the check found: the proof's id (when `metadata.json` could be read) and the failures.
    struct Outcome: Sendable {
        var proofID: UUID?
        var failures: [ExportBundleVerifier.Failure]
    }

    /// Checks the folder `folder` (`deliveries/<reference>/`), whose `metadata.json` is `metadata`
    /// and whose other files are `files` (by name), against the event `event` gives for the proof
    /// id (nil: none), told what the folder's own digests are (so an index can answer from those).
    /// The files named in `omitted` (the export left the raw dynamics out, as its signed manifest
    /// says) must be absent and listed as omitted; their listed digests stand in for them.
    static func check(folder: String, metadata: [UInt8], files: Files, omitted: Set<String> = [],
                      event: (UUID, RecordedEventDigests) -> RecordedEventDigests?) -> Outcome {
        check(folder: folder, metadata: Metadata.read(metadata), files: files, omitted: omitted, event: event)
    }

    /// ``check(folder:metadata:files:omitted:event:)`` with `metadata.json` already read.
    static func check(folder: String, metadata: Metadata, files held: Files, omitted: Set<String> = [],
                      event: (UUID, RecordedEventDigests) -> RecordedEventDigests?) -> Outcome {
        var failures: [ExportBundleVerifier.Failure] = []
        func fail(_ name: String, _ reason: String) { failures.append(.init(file: folder + name, reason: reason)) }
        let document: BundleProofReading
        do {
            document = try metadata.document.get()
        } catch {
            fail("metadata.json", "not a version 3 proof document (\(error))")
            return Outcome(proofID: nil, failures: failures)
        }
        let reference = document.reference
        if BundleLayout.folder(reference) != folder || document.deliveryReference != reference {
            fail("metadata.json", "names delivery \(reference), but lies in \(folder)")
        }
        // The folder's files, with each left-out file's listed digest in its place: what the
        // checks against the document and the event below read.
        var files = held
        for name in BundleLayout.proofFiles.dropFirst() {
            let listed = document.file(name)
            guard let found = held[name] else {
                if omitted.contains(name) {
                    if let listed, listed.omitted, let digest = listed.sha256 {
                        files[name] = FileFacts(bytes: listed.bytes, sha256: digest)
                    } else {
                        fail("metadata.json", "does not list \(name) as omitted, which the manifest says this export leaves out")
                    }
                } else {
                    fail(name, "missing from the bundle")
                }
                continue
            }
            if omitted.contains(name) { fail(name, "is in the bundle, but the manifest says this export leaves it out") }
            guard let listed, let listedDigest = listed.sha256 else {
                fail("metadata.json", "does not list \(name)")
                continue
            }
            if listed.omitted { fail("metadata.json", "lists \(name) as omitted, but the bundle holds it") }
            if listed.bytes != found.bytes || listedDigest != found.sha256 {
                fail(name, "SHA-256 \(found.sha256) (\(found.bytes) bytes) differs from metadata.json's \(listedDigest) (\(listed.bytes) bytes)")
            }
        }
        if let points = files["points"], document.originalSHA256 != points.sha256 || document.originalSize != points.bytes {
            fail("metadata.json", "original.sha256/size do not describe the points file")
        }
        if let png = files["signature.png"], document.pngSHA256 != png.sha256 {
            fail("metadata.json", "png.sha256 does not describe signature.png")
        }
        let facts = document.factsDigest
        let committed = document.commitmentSalt.flatMap { try? $0.commit(facts.bytes) }.map(Digest32.init)
        let signed = document.deviceSignature
        let subject = "delivery:" + reference
        let actual = RecordedEventDigests(seq: 0, chain: 0, subject: subject, points: files["points"]?.sha256,
                                          png: files["signature.png"]?.sha256, ink: files["ink"]?.sha256, metadata: facts,
                                          metadataCommitment: committed, deviceKeyID: signed?.keyID,
                                          deviceSignature: signed.flatMap { Data(base64Encoded: $0.signature) }?.hexString)
        guard let recorded = event(document.proofID, actual) else {
            fail("", "proof \(document.proofID.uuidString.lowercased()) has no proof_recorded event in the bundle's audit segments")
            return Outcome(proofID: document.proofID, failures: failures)
        }
        // Described only when something fails: every proof of a bundle is checked.
        var at: String { "its proof_recorded event (seq \(recorded.seq), chain \(recorded.chain))" }
        if recorded.subject != subject {
            fail("metadata.json", "the proof belongs to delivery:\(reference), \(at) to \(recorded.subject)")
        }
        func bound(_ name: String, _ digest: Digest32?, _ what: String) {
            guard let found = files[name]?.sha256 else { return }
            if let digest, digest != found {
                fail(name, "SHA-256 \(found) differs from \(what) \(digest) in \(at)")
            } else if digest == nil, name != "ink" {
                fail(name, "\(at) binds no \(what)")
            }
        }
        bound("points", recorded.points, "points_sha256")
        bound("signature.png", recorded.png, "png_sha256")
        bound("ink", recorded.ink, "ink_sha256")
        if let expected = recorded.metadata, facts != expected {
            fail("metadata.json", "its proof facts hash to \(facts), but \(at) binds metadata_sha256 \(expected)")
        }
        if let expected = recorded.metadataCommitment {
            if let committed {
                if committed != expected {
                    fail("metadata.json", "its proof facts commit to \(committed) under its commitment_salt, but \(at) binds "
                         + "metadata_commitment \(expected)")
                }
            } else {
                fail("metadata.json", "states no commitment_salt, but \(at) binds metadata_commitment \(expected)")
            }
        }
        if let failure = checkDevice(signed, recorded: recorded, reference: reference, at: at) { fail("metadata.json", failure) }
        return Outcome(proofID: document.proofID, failures: failures)
    }

    /// The device signature `metadata.json` states against the one `recorded` binds (both absent for
    /// an unsigned upload), and, when signed, the signature over the recorded body digest and the
    /// delivery with the public key the document names (docs/audit.md, "Verifying a bundle").
    static func checkDevice(_ signed: BundleProofReading.DeviceSignatureMember?, recorded: RecordedEventDigests, reference: String,
                            at: @autoclosure () -> String) -> String? {
        let stated = signed.flatMap { Data(base64Encoded: $0.signature) }?.hexString
        guard signed?.keyID == recorded.deviceKeyID, stated == recorded.deviceSignature else {
            return "its device_signature (\(signed?.keyID ?? "none")) is not the one \(at()) binds (\(recorded.deviceKeyID ?? "none"))"
        }
        guard let signed else { return nil }
        func doesNotVerify() -> String {
            "its device signature does not verify over the recorded body for delivery \(reference) with its public_key"
        }
        guard let publicKeyBytes = Data(base64Encoded: signed.publicKey).map(Array.init) else { return doesNotVerify() }
        // Not canonical, off the curve or of small order: a constant signature would verify under it.
        let publicKey: Ed25519PublicKey
        do { publicKey = try Ed25519PublicKey(rawRepresentation: publicKeyBytes) } catch {
            return "its device signature's public_key is not a usable Ed25519 public key (\(error.message)), so it proves no signer"
        }
        guard let keyID = UUID(text: signed.keyID), let points = recorded.points,
              let signature = Data(base64Encoded: signed.signature).map(Array.init),
              publicKey.isValidSignature(signature, for: DeviceUploadMessage.bytes(reference: reference, keyID: keyID, bodySHA256: points.bytes)) else {
            return doesNotVerify()
        }
        return nil
    }
}
