/// The actions the audit log records.
public enum AuditAction: String, Sendable, CaseIterable {
    /// A delivery was created (subject `delivery:<reference>`).
    case deliveryCreated = "delivery_created"
    /// A proof was stored (subject `delivery:<reference>`; details `proof_id`, `points_sha256`, `png_sha256`,
    /// `ink_sha256`, `metadata_sha256`, and for a device-signed upload `device_key_id` and `device_signature`).
    case proofRecorded = "proof_recorded"
    /// A failed delivery attempt was stored (subject `delivery:<reference>`; details `attempt_id`,
    /// `delivery_id`, `reason`, `attempt_sha256`).
    case attemptRecorded = "delivery_attempt_recorded"
    /// A dispatcher gave a delivery up (subject `delivery:<reference>`; details `delivery_id`, `closure_sha256`).
    case deliveryFailed = "delivery_failed"
    /// A dispatcher cancelled a delivery (subject `delivery:<reference>`; details `delivery_id`, `closure_sha256`).
    case deliveryCancelled = "delivery_cancelled"
    /// A delivery's personal data was erased (subject `delivery:<reference>`; details `delivery_id`,
    /// `rule` (`request`, or `retention` for the retention job, 0027), `reason`): its data key
    /// destroyed, its personal facts removed (0026).
    case deliveryErased = "delivery_erased"
    /// The retention policy changed (`countersign migrate` with `RETENTION_DAYS`; subject
    /// `retention:policy`; details `days` and `previous_days`, a number or `none`).
    case retentionPolicySet = "retention_policy_set"
    /// A legal hold was set on a delivery (subject `delivery:<reference>`; details `delivery_id`, `reason`).
    case legalHoldSet = "legal_hold_set"
    /// A delivery's legal hold was cleared (subject `delivery:<reference>`; details `delivery_id`).
    case legalHoldCleared = "legal_hold_cleared"
    /// The stored PNG was read.
    case proofPNGRead = "proof_png_read"
    /// The SVG was rendered from the stored ink and read.
    case proofSVGRead = "proof_svg_read"
    /// The original points (or their InkML) were read.
    case proofPointsRead = "proof_points_read"
    /// Proofs were exported (subject `export:<since>/<until>`; details `format`, `since`, `until`).
    case proofsExported = "proofs_exported"
    /// The proofs received in a period were exported to an archive bundle and may be dropped by the
    /// retention procedure (subject `archive:<since>/<until>`; details `since`, `until`,
    /// `bundle_sha256`, `proof_count`): verification then accepts those proofs missing.
    case proofsArchived = "proofs_archived"
    /// An API key was made (subject `key:<uuid>`).
    case keyCreated = "key_created"
    /// An API key was revoked (subject `key:<uuid>`).
    case keyRevoked = "key_revoked"
    /// A courier registered a device key (subject `device_key:<uuid>`; details `public_key` (hex of
    /// the 32 bytes), `registered_by`, `label`).
    case deviceKeyRegistered = "device_key_registered"
    /// An admin or dispatcher approved a device key (subject `device_key:<uuid>`; details `public_key`).
    case deviceKeyApproved = "device_key_approved"
    /// An admin or dispatcher revoked a device key (subject `device_key:<uuid>`; details `public_key`).
    case deviceKeyRevoked = "device_key_revoked"
    /// A webhook endpoint was registered (subject `webhook:<uuid>`; details `url` without its query,
    /// fragment and userinfo, `url_omitted` naming what was left out, `events`; ``WebhookAuditURL``).
    case webhookCreated = "webhook_created"
    /// A webhook endpoint was changed, paused or re-enabled (subject `webhook:<uuid>`; details: what
    /// changed, a new URL as ``webhookCreated`` records it).
    case webhookUpdated = "webhook_updated"
    /// A webhook endpoint was deleted (subject `webhook:<uuid>`).
    case webhookDeleted = "webhook_deleted"
    /// A webhook endpoint's secret was rotated (subject `webhook:<uuid>`; details `previous_valid_until`;
    /// a forced rotation during another's grace period adds `forced` and `superseded_valid_until`).
    case webhookSecretRotated = "webhook_secret_rotated"
    /// The sender disabled a webhook endpoint after sustained failure (subject `webhook:<uuid>`;
    /// details `failing_since`, `last_error`).
    case webhookDisabled = "webhook_disabled"
    /// An admin sent a `webhook.test` event (subject `webhook:<uuid>`).
    case webhookTestSent = "webhook_test_sent"
    /// An admin queued a webhook delivery again (subject `webhook:<uuid>`; details `delivery_id`).
    case webhookDeliveryRetried = "webhook_delivery_retried"
}
