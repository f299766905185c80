-- 0024: the webhook sender claims due deliveries endpoint by endpoint, at most
-- WEBHOOK_CONCURRENCY_PER_ENDPOINT in flight to each (security issue 41, item 6: one receiver
-- hanging 15 s took all 8 slots, and a fast endpoint's deliveries waited a median of 10 s).
--
-- The claim (WebhookDeliveryQueue.claimStatement) reads, for each live endpoint, its oldest due
-- pending deliveries. This index gives each endpoint its own ordered run of pending rows, so the
-- claim never walks one endpoint's backlog (thousands of rows while its receiver is down) to reach
-- another's. Partial, like webhook_deliveries_due: a delivery leaves it when it succeeds or fails.
--
-- webhook_deliveries_due (0015) stays: replicas still running the previous claim during a rolling
-- upgrade read it. A later migration may drop it.

CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, event_id)
    WHERE state = 'pending';
