/// Where and how the audit chain (or a proof it vouches for) fails verification.
public struct AuditBreak: Sendable, Equatable {
    /// What failed.
    public enum Kind: String, Sendable, Equatable {
        /// The event's stored hash is not the hash of its content.
        case hashMismatch = "hash_mismatch"
        /// The event's `prev_hash` is not the previous event's hash.
        case prevMismatch = "prev_mismatch"
        /// A sequence number is missing from the legacy (v1) part of chain 0, whose numbers had no
        /// gaps. Gaps between v2 events are normal (a rolled-back append keeps its number).
        case gap
        /// Two events share a sequence number (the primary key includes `occurred_at`, so only
        /// verification can tell).
        case duplicateSeq = "duplicate_seq"
        /// The event names a chain `audit_chains` does not have.
        case unknownChain = "unknown_chain"
        /// A v1 (legacy) event that is not in the legacy prefix of chain 0.
        case encodingInvalid = "encoding_invalid"
        /// A chain's head in `audit_chains` is not its newest event (`seq` is the head named there).
        case headMismatch = "head_mismatch"
        /// The stored PNG does not hash to the digest recorded for it.
        case proofPNGMismatch = "proof_png_mismatch"
        /// The stored original body does not hash to the digest recorded for it.
        case proofBodyMismatch = "proof_body_mismatch"
        /// A recorded proof is no longer in the proofs table.
        case proofMissing = "proof_missing"
        /// An erased delivery (0026) without its `delivery_erased` event: erased behind the service's back.
        case erasureWithoutEvent = "erasure_without_event"
        /// The stored canonical ink does not hash to the digest its event recorded.
        case proofInkMismatch = "proof_ink_mismatch"
        /// A proof's facts (signer, times, location, device, flags, render options, uploader, its
        /// delivery) no longer give the digest its event recorded.
        case proofMetadataMismatch = "proof_metadata_mismatch"
        /// A proof sits under another delivery than the one its event names.
        case proofDeliveryMismatch = "proof_delivery_mismatch"
        /// A proof's stored device key id or signature is not what its event recorded (added,
        /// removed or changed after the upload).
        case proofDeviceMismatch = "proof_device_mismatch"
        /// A proof's device signature does not verify over its recorded body and delivery with the
        /// public key the device key's registration event bound (or that event is missing).
        case deviceSignatureInvalid = "device_signature_invalid"
        /// A device key row no longer holds the public key (or owner) its events bound, or a
        /// signed proof's key was not registered by the proof's uploader.
        case deviceKeyMismatch = "device_key_mismatch"
        /// A proof was signed by a key that was not approved (or already revoked) when it was recorded.
        case deviceKeyNotApproved = "device_key_not_approved"
        /// A stored proof has no `proof_recorded` event.
        case proofWithoutEvent = "proof_without_event"
        /// A proof has more than one `proof_recorded` event.
        case proofEventDuplicate = "proof_event_duplicate"
        /// A delivery's recipient, address or destination no longer give the digest its event recorded.
        case deliveryMismatch = "delivery_mismatch"
        /// A failed attempt's facts no longer give the digest its event recorded, or it is gone.
        case attemptMismatch = "attempt_mismatch"
        /// A stored attempt has no `delivery_attempt_recorded` event.
        case attemptWithoutEvent = "attempt_without_event"
        /// A delivery is cancelled or given up with no `delivery_failed` / `delivery_cancelled` event.
        case closureWithoutEvent = "closure_without_event"
        /// A delivery is marked delivered with no `proof_recorded` event under its subject.
        case deliveredWithoutProof = "delivered_without_proof"
        /// An API key has no `key_created` event (made behind the service's back).
        case keyWithoutEvent = "key_without_event"
        /// How a delivery was cancelled or given up (status, reason, time, key) no longer gives the
        /// digest its event recorded.
        case closureMismatch = "closure_mismatch"
        /// A stored checkpoint's signature does not verify.
        case checkpointSignatureInvalid = "checkpoint_signature_invalid"
        /// A stored checkpoint was signed by a key the caller does not trust.
        case checkpointUntrustedKey = "checkpoint_untrusted_key"
        /// A signed checkpoint names an event the chain no longer has, or has with another hash
        /// (the newest events were removed or the chain was rewritten).
        case checkpointMismatch = "checkpoint_mismatch"
        /// A witnessed checkpoint (read back from a witness) signs a head the recomputed chain no
        /// longer has: the chain ends before it, or has another event there (rewritten or cut).
        case witnessHeadMissing = "witness_head_missing"
        /// A witnessed checkpoint is no longer in `audit_checkpoints` (deleted from the database).
        case witnessCheckpointMissing = "witness_checkpoint_missing"
        /// The RFC 3161 token beside a witnessed checkpoint does not verify (not signed under the
        /// TSA's CA, or not over the checkpoint file's exact bytes).
        case witnessTimestampInvalid = "witness_timestamp_invalid"
    }

    /// The sequence number at which the chain breaks (the missing one for a gap).
    public var seq: Int64
    /// The chain concerned, when one is.
    public var chain: Int16?
    /// What failed.
    public var kind: Kind
    /// The value the chain vouches for (hex digest or sequence number).
    public var expected: String
    /// The value found.
    public var found: String
    /// The event's subject (e.g. `delivery:REF-1`), when there is an event.
    public var subject: String?
    /// The proof concerned, for proof kinds.
    public var proofID: String?

    /// Creates a break report.
    public init(seq: Int64, kind: Kind, expected: String, found: String, subject: String? = nil, proofID: String? = nil,
                chain: Int16? = nil) {
        self.seq = seq
        self.chain = chain
        self.kind = kind
        self.expected = expected
        self.found = found
        self.subject = subject
        self.proofID = proofID
    }
}
