import Foundation
import Logging
import Postgres
import ProofStore
import ServiceLifecycle
import Synchronization

/// Sends the outbox: a ServiceLifecycle service in every replica.
///
/// It sleeps until a `countersign_webhooks` notification (a committed enqueue) or the poll
/// interval, claims due deliveries (``WebhookDeliveryQueue/claim(limit:lease:)``), posts them
/// concurrently, signed, each within the timeout, and records every attempt. Uploads never wait for
/// it: they only insert rows, and a slow or dead receiver costs them nothing.
public final class WebhookSender: Service, Sendable {
    let queue: WebhookDeliveryQueue
    let box: WebhookSecretBox
    let urlGuard: WebhookURLGuard
    let transport: any WebhookTransport
    let settings: WebhookSettings
    let schedule: RetrySchedule
    let notificationsURL: String?
    let logger: Logger
    let wake = WakeSignal()
    /// Attempts posted and not yet recorded: in all (at most `settings.concurrency`) and per
    /// endpoint (at most ``perEndpointCap`` each).
    let inFlight = Mutex(InFlight())

    struct InFlight {
        var total = 0
        var byEndpoint: [UUID: Int] = [:]

        mutating func start(_ endpoint: UUID) {
            total += 1
            byEndpoint[endpoint, default: 0] += 1
        }

        mutating func finish(_ endpoint: UUID) {
            total -= 1
            let left = (byEndpoint[endpoint] ?? 1) - 1
            byEndpoint[endpoint] = left > 0 ? left : nil
        }
    }

    /// `WEBHOOK_CONCURRENCY_PER_ENDPOINT`, never above `WEBHOOK_CONCURRENCY`.
    var perEndpointCap: Int { max(1, min(settings.concurrencyPerEndpoint, settings.concurrency)) }

    /// A sender over `queue`; `notificationsURL` is the database to LISTEN on (nil: poll only).
    public init(queue: WebhookDeliveryQueue, box: WebhookSecretBox, urlGuard: WebhookURLGuard, transport: any WebhookTransport,
                settings: WebhookSettings, notificationsURL: String?, logger: Logger = Logger(label: "countersign.webhooks")) {
        self.queue = queue
        self.box = box
        self.urlGuard = urlGuard
        self.transport = transport
        self.settings = settings
        self.schedule = RetrySchedule(base: settings.retryBase, maximum: settings.retryMax, window: settings.retryWindow)
        self.notificationsURL = notificationsURL
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let url = self.notificationsURL {
                    let listener = PostgresListener(url: url, channel: WebhookOutbox.channel) { [wake = self.wake] event in
                        // `listening` too: notifications sent while the listener was away are covered by a claim.
                        if event != .lost { wake.raise() }
                    }
                    group.addTask { try? await listener.run() }
                }
                group.addTask { await self.sendUntilCancelled() }
                await group.next()
                group.cancelAll()
            }
        }
        // Attempts in flight finished with the task group above; their connections go now.
        try? await transport.shutdown()
    }

    /// Keeps up to `concurrency` attempts in flight, at most `concurrencyPerEndpoint` of them to
    /// any one endpoint: a slot that frees claims the next due delivery at once, so one slow
    /// receiver or one slow post holds only its own slot, not a whole batch (claiming in batches
    /// and waiting for each batch's slowest post capped a backlog's drain at a few dozen posts a
    /// second), and a receiver that hangs holds only its endpoint's few slots, never the others'
    /// (one hanging endpoint once filled all 8, and a fast endpoint's events waited for its
    /// timeouts: security issue 41, item 6).
    func sendUntilCancelled() async {
        await withDiscardingTaskGroup { attempts in
            var failing = false
            while !Task.isCancelled {
                let (busy, byEndpoint) = inFlight.withLock { ($0.total, $0.byEndpoint) }
                let free = settings.concurrency - busy
                var claimed: [ClaimedWebhookDelivery] = []
                if free > 0 {
                    do {
                        claimed = try await queue.claim(limit: free, perEndpoint: perEndpointCap, inFlight: byEndpoint,
                                                        lease: settings.timeout + .seconds(30))
                        if failing { logger.notice("webhook outbox reachable again") }
                        failing = false
                    } catch {
                        if !failing { logger.warning("cannot read the webhook outbox; retrying", metadata: ["error": "\(error)"]) }
                        failing = true
                    }
                }
                for delivery in claimed {
                    inFlight.withLock { $0.start(delivery.endpointID) }
                    attempts.addTask {
                        await self.attempt(delivery)
                        self.inFlight.withLock { $0.finish(delivery.endpointID) }
                        self.wake.raise()  // a slot is free: claim again
                    }
                }
                // Every free slot filled: claim again at once (the next round finds none free and waits).
                if !claimed.isEmpty && claimed.count == free { continue }
                // Nothing more due (or only for endpoints at their cap), or the outbox unreachable:
                // until a slot frees, new work is committed (a notification), or the poll interval.
                await wake.wait(timeout: failing ? .seconds(1) : settings.pollInterval)
            }
        }
    }

    /// One attempt of `delivery`, recorded. A failure to record leaves the lease to expire: the
    /// delivery is sent again (same `webhook-id`), never lost.
    func attempt(_ delivery: ClaimedWebhookDelivery) async {
        let outcome = await send(delivery)
        do {
            if try await queue.record(outcome, for: delivery, disableAfter: settings.disableAfter) {
                logger.warning("webhook endpoint disabled after sustained failure",
                               metadata: ["endpoint": "\(delivery.endpointID)", "error": "\(outcome.error ?? "")"])
            }
        } catch {
            logger.warning("could not record a webhook attempt; it will be sent again",
                           metadata: ["delivery": "\(delivery.id)", "error": "\(error)"])
        }
    }

    /// Posts `delivery` and judges the answer.
    func send(_ delivery: ClaimedWebhookDelivery) async -> WebhookAttemptOutcome {
        let started = ContinuousClock.now
        func outcome(status: Int?, error: String?, retryAfter: Duration? = nil) -> WebhookAttemptOutcome {
            let elapsed = ContinuousClock.now - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            let succeeded = status.map { (200..<300).contains($0) } ?? false
            let next = succeeded ? nil : schedule.nextAttempt(after: delivery.attempts + 1, queuedAt: delivery.createdAt, now: Date(),
                                                                retryAfter: retryAfter)
            return WebhookAttemptOutcome(succeeded: succeeded, statusCode: status, latencyMilliseconds: milliseconds,
                                         error: error.map { String($0.prefix(500)) }, nextAttemptAt: next)
        }
        do {
            try await urlGuard.check(delivery.url)
        } catch {
            return outcome(status: nil, error: "refused: \(error.reason)")
        }
        let body = Array(delivery.payload.utf8)
        let id = "msg_" + delivery.messageID.uuidString.lowercased()
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers: [(String, String)]
        do {
            var secrets = [try box.open(delivery.secretSealed, for: delivery.endpointID)]
            if let previous = delivery.previousSecretSealed { secrets.append(try box.open(previous, for: delivery.endpointID)) }
            headers = [("content-type", "application/json"), ("user-agent", "Countersign-Webhooks/1"),
                       ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                       ("webhook-signature", try WebhookSignature.header(id: id, timestamp: timestamp, body: body, secrets: secrets))]
        } catch {
            return outcome(status: nil, error: "cannot sign: \(error)")
        }
        do {
            let response = try await transport.post(url: delivery.url, headers: headers, body: body, timeout: settings.timeout)
            let retryAfter = RetrySchedule.parseRetryAfter(response.retryAfter, now: Date())
            let error = (200..<300).contains(response.status) ? nil : "HTTP \(response.status)"
            return outcome(status: response.status, error: error, retryAfter: retryAfter)
        } catch {
            return outcome(status: nil, error: "\(error)")
        }
    }
}
