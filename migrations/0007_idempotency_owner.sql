-- 0007: which service process holds an `in_flight` idempotency claim. A process that lost its
-- claim's release (the database went away mid-upload) knows the claim is stale as soon as none
-- of its own requests holds that key, and takes it over at once instead of answering 409 for the
-- 60 s that protect claims of other, possibly live, processes.
ALTER TABLE idempotency_records ADD COLUMN owner uuid;
