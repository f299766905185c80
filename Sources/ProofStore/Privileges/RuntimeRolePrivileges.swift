/// The runtime role's privileges, object by object: the one list `countersign migrate` grants
/// from after every migration (``RuntimeRole/apply(on:)``), and the tests check against the
/// database (every object of `public` decided, nothing more granted).
///
/// A migration that adds a table, sequence or function adds its line here. The runtime role never
/// owns anything, never has DELETE or TRUNCATE, and has UPDATE only on the columns named below,
/// whose changes the tables' triggers restrict (a delivery only goes from pending to delivered, a
/// chain head only forward). Every other change is a SECURITY DEFINER function (migration 0012).
public enum RuntimeRolePrivileges {
    /// The tables whose rows are evidence: `serve` refuses a role that owns one of them or holds
    /// table-wide UPDATE, DELETE, TRUNCATE or TRIGGER on it (``DatabaseRoleCheck``).
    public static let evidenceTables = ["proofs", "audit_events", "audit_checkpoints", "audit_chains", "deliveries", "api_keys", "device_keys", "delivery_data_keys", "delivery_legal_holds"]

    /// Every table, sequence and function of schema `public` (partitions follow their parent:
    /// rows are reached through it) with what the runtime role may do with it.
    public static let decisions: [PrivilegeDecision] = [
        // Tables.
        .table("schema_migrations", "SELECT", why: "serve checks that no migration is pending"),
        .table("service_info", "SELECT", why: "the instance id of /readyz"),
        .table("api_keys", "SELECT", "INSERT", why: "authentication; `keys create` (revoking: countersign_revoke_api_key)"),
        .table("deliveries", "SELECT", "INSERT", "UPDATE (status, delivered_at, updated_at)",
               why: "creating deliveries; an upload marks its delivery delivered (the deliveries_guard trigger forbids going back)"),
        .table("proofs", "SELECT", "INSERT", why: "uploads, reads and exports; proofs never change"),
        .table("idempotency_records", "SELECT", "INSERT",
               "UPDATE (request_sha256, created_at, owner, state, completed_at, response_status, response_type, response_location, response_body)",
               why: "claiming a key (INSERT … ON CONFLICT DO UPDATE of a stale claim), completing it with the stored answer; releasing: countersign_release_idempotency"),
        .table("audit_events", "SELECT", "INSERT", why: "appending and verifying the audit chain; events never change"),
        .table("audit_chains", "SELECT", "UPDATE (head_seq, head_hash)",
               why: "each append locks its chain's head and moves it (the audit_chains_forward trigger: forward only)"),
        .table("audit_checkpoints", "SELECT", "INSERT", why: "signed checkpoints; they never change"),
        .table("audit_checkpoint_witnesses", "SELECT", "INSERT",
               why: "a receipt per witness attempt of a scheduled checkpoint (0013); receipts never change"),
        .table("delivery_attempts", "SELECT", "INSERT", why: "failed delivery attempts (0014); append-only, refused by trigger"),
        .table("webhook_endpoints", "SELECT", "INSERT",
               "UPDATE (url, description, events, enabled, disabled_reason, disabled_at, failing_since, updated_at, deleted_at, secret_sealed, previous_secret_sealed, previous_secret_until)",
               why: "admins manage endpoints (0015); deletion is a soft delete (deleted_at), so no DELETE"),
        .table("webhook_events", "SELECT", "INSERT", why: "the transactional outbox (0015): written with the change it reports, never changed"),
        .table("webhook_deliveries", "SELECT", "INSERT",
               "UPDATE (state, attempts, next_attempt_at, last_attempt_at, last_status, last_error, completed_at)",
               why: "each event's delivery to each endpoint; the sender claims rows FOR UPDATE SKIP LOCKED and records the outcome"),
        .table("webhook_attempts", "SELECT", "INSERT", why: "every post to a receiver, for GET /v1/webhooks/{id}/deliveries"),
        .table("delivery_search_text", "SELECT",
               why: "the text search matches reference, recipient and address here (0018); only the deliveries trigger writes it"),
        .table("proof_search", "SELECT",
               why: "the search matches signers' names and flags here, band by band (0022); only the proofs trigger writes it"),
        .table("delivery_data_keys", "SELECT", "INSERT",
               why: "an upload stores its delivery's wrapped data key (0025); reads unwrap it; a wrapped key never changes (trigger)"),
        .table("delivery_legal_holds", "SELECT",
               why: "a delivery's legal hold blocks its erasure (0026); set and cleared only through the functions below"),
        .table("retention_policy", "SELECT",
               why: "serve reports the policy (0027); only the owner sets it (`countersign migrate`, RETENTION_DAYS)"),
        .table("device_keys", "SELECT", "INSERT",
               why: "couriers register device keys (0017; the guard admits only `registered` rows); approving and revoking: the functions below"),
        // Sequences (identity columns need no grant: INSERT on the table draws from them).
        .sequence("webhook_events_id_seq", why: "outbox event ids (the payload's per-delivery sequence)"),
        .sequence("webhook_attempts_id_seq", why: "webhook_attempts.id is a bigserial: its default calls nextval"),
        .ownerOnly(.sequence, "audit_checkpoint_witnesses_id_seq", why: "identity of audit_checkpoint_witnesses.id: INSERT draws from it"),
        .ownerOnly(.sequence, "delivery_attempts_seq_seq", why: "identity of delivery_attempts.seq: INSERT draws from it"),
        .sequence("audit_events_seq", why: "audit event numbers, drawn under the chain's lock"),
        .ownerOnly(.sequence, "deliveries_seq_seq", why: "identity of deliveries.seq: INSERT draws from it"),
        .ownerOnly(.sequence, "audit_checkpoints_id_seq", why: "identity of audit_checkpoints.id: INSERT draws from it"),
        // Functions the runtime role calls (SECURITY DEFINER, migration 0012).
        .function("countersign_revoke_api_key(uuid)", why: "`keys revoke`"),
        .function("countersign_release_idempotency(uuid,text)", why: "a failed request releases its in-flight claim"),
        .function("countersign_maintain_partitions(text,integer)", why: "serving replicas create next months' partitions daily"),
        .function("countersign_close_delivery(text,text,text,text,timestamp with time zone)",
                  why: "cancel and fail (0014, 0023): the only way the service sets a delivery's closing columns, as the key whose token it is given"),
        .function("countersign_approve_device_key(uuid,text)", why: "an admin or dispatcher approves a registered device key (0017), found by its token (0023)"),
        .function("countersign_revoke_device_key(uuid,text)", why: "an admin or dispatcher revokes a device key, for good (0017), found by its token (0023)"),
        .function("countersign_erase_delivery(text,text)",
                  why: "an admin erases a delivery's personal data (0026), as the key whose token it is given"),
        .function("countersign_set_legal_hold(text,text,text)", why: "an admin or auditor holds a delivery against erasure (0026)"),
        .function("countersign_clear_legal_hold(text,text)", why: "an admin or auditor clears a legal hold (0026)"),
        .function("countersign_erase_expired(integer)",
                  why: "the retention job erases what the stored policy makes due (0027): the function picks the deliveries"),
        .function("countersign_uuid_v7()", why: "deliveries.id's default (0020): creating a delivery runs it as the inserting role"),
        // Functions only the owner's objects use: triggers fire whoever writes, and the general
        // partition function may create partitions of any table for any month.
        .ownerOnly(.function, "countersign_refuse_change()", why: "trigger: append-only tables"),
        .ownerOnly(.function, "countersign_guard_delivery()", why: "trigger: a delivered delivery stays delivered"),
        .ownerOnly(.function, "countersign_audit_chain_advance()", why: "trigger: chain heads only move forward"),
        .ownerOnly(.function, "countersign_notify_api_keys_changed()", why: "trigger: key changes empty the servers' key caches"),
        .ownerOnly(.function, "countersign_guard_attempt()", why: "trigger: attempts only on a pending delivery (locks it FOR SHARE)"),
        .ownerOnly(.function, "countersign_notify_webhook_deliveries()", why: "trigger: new deliveries wake the webhook senders"),
        .ownerOnly(.function, "countersign_copy_delivery_search_text()",
                   why: "trigger (SECURITY DEFINER): a delivery's reference, recipient and address into delivery_search_text"),
        .ownerOnly(.function, "countersign_copy_proof_search()",
                   why: "trigger (SECURITY DEFINER): a proof's delivery seq, signer and flags into proof_search"),
        .ownerOnly(.function, "countersign_guard_device_key()", why: "trigger: device keys only go registered → approved → revoked"),
        .ownerOnly(.function, "countersign_guard_signed_proof()",
                   why: "trigger: a signed proof only with an approved key of its uploader (locks the key FOR SHARE)"),
        .ownerOnly(.function, "countersign_acting_key(text,text,text)",
                   why: "the definer functions' look-up of the caller's key by its token (0023); they run it as the owner"),
        .ownerOnly(.function, "countersign_acting_key_in(text,text[],text,text)",
                   why: "0026's definer functions' look-up of an admin's or auditor's key by its token"),
        .ownerOnly(.function, "countersign_guard_erasure()",
                   why: "trigger: proofs, attempts and data keys change only into their erased form, under an erased delivery"),
        .ownerOnly(.function, "countersign_erase_personal_data(uuid,bigint,text,text,uuid)",
                   why: "the erasure both definer functions share (0027); they run it as the owner"),
        .ownerOnly(.function, "countersign_audit_lock_chains(smallint[],integer[])", why: "not called: the append locks its chains inline"),
        .ownerOnly(.function, "countersign_ensure_monthly_partitions(regclass,integer,timestamp with time zone,timestamp with time zone)",
                   why: "migrate runs it as the owner; serving goes through countersign_maintain_partitions"),
    ]
}
