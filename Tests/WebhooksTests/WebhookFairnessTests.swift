import Foundation
import Postgres
import ProofStore
import Synchronization
import Testing
import TestSupport
@testable import Webhooks

/// Answers every post at once, except those to `hangingURL`, which it holds until cancelled (a
/// receiver that accepts the connection and never answers). Keeps the URLs in the order posts began.
final class HangingTransport: WebhookTransport {
    let hangingURL: String
    private let begun = Mutex<[String]>([])

    init(hangingURL: String) { self.hangingURL = hangingURL }

    var posts: [String] { begun.withLock { $0 } }

    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> WebhookResponse {
        begun.withLock { $0.append(url) }
        if url == hangingURL { try await Task.sleep(for: .seconds(3600)) }
        return WebhookResponse(status: 204, retryAfter: nil)
    }

    func shutdown() async throws {}
}

/// Security issue 41, item 6: with one endpoint hanging, a fast endpoint's deliveries waited a
/// median of 10 s, because the hanging one's deliveries, oldest, filled all 8 slots.
@Suite("Webhook sending is fair across endpoints", .needsDatabase)
struct WebhookFairnessTests {
    static func deliveries(_ database: PostgresClient, _ prefix: String, count: Int) async throws {
        for index in 0..<count {
            _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(
                NewDelivery(reference: "\(prefix)-\(index)", recipientName: "A", address: "B", destination: nil), by: nil)
        }
    }

    @Test("a claim takes at most the cap from one endpoint, less its attempts in flight, oldest first across endpoints")
    func claimCapsEachEndpoint() async throws {
        try await ScratchDatabase.with(prefix: "wh_cap") { _, database in
            let (slow, _) = try await WebhookOutboxTests.endpoint(database, url: "http://127.0.0.1:9/slow", events: [.deliveryCreated])
            try await Self.deliveries(database, "OLD", count: 10)  // the slow endpoint's alone, and oldest
            let (fast, _) = try await WebhookOutboxTests.endpoint(database, url: "http://127.0.0.1:9/fast", events: [.deliveryCancelled])
            for index in 0..<3 {
                try await database.withTransaction { session in
                    WebhookOutbox.enqueue(.deliveryCancelled(reference: "OLD-\(index)", reason: nil, cancelledAt: Date()), in: session)
                }
            }
            let queue = WebhookDeliveryQueue(database: database)
            let lease = Duration.seconds(60)

            // Oldest first, but no more than 2 from the slow endpoint however many of its are older.
            let first = try await queue.claim(limit: 3, perEndpoint: 2, lease: lease)
            #expect(first.map(\.endpointID) == [slow, slow, fast])
            // Its 2 in flight: the slow endpoint is at its cap and skipped; the fast one has room for 1 more.
            let second = try await queue.claim(limit: 8, perEndpoint: 2, inFlight: [slow: 2, fast: 1], lease: lease)
            #expect(second.map(\.endpointID) == [fast])
            #expect(try await queue.claim(limit: 8, perEndpoint: 2, inFlight: [slow: 2, fast: 2], lease: lease).isEmpty)
            // One of the slow endpoint's attempts finished: one more of its deliveries, the next oldest.
            let third = try await queue.claim(limit: 8, perEndpoint: 2, inFlight: [slow: 1, fast: 2], lease: lease)
            #expect(third.map(\.endpointID) == [slow])
            // Without a cap, every due delivery (limit permitting): the slow endpoint's 7 left and the fast one's last.
            let rest = try await queue.claim(limit: 100, lease: lease)
            #expect(rest.filter { $0.endpointID == slow }.count == 7 && rest.filter { $0.endpointID == fast }.count == 1)
            let all = first + second + third + rest
            #expect(Set(all.map(\.id)).count == 13, "no delivery claimed twice")
        }
    }

    @Test("a hanging receiver holds only its endpoint's slots: another endpoint's deliveries go out meanwhile")
    func hangingReceiverHoldsOnlyItsSlots() async throws {
        try await ScratchDatabase.with(prefix: "wh_fair") { _, database in
            let slowURL = "http://127.0.0.1:9/hangs", fastURL = "http://127.0.0.1:9/answers"
            let (slow, _) = try await WebhookOutboxTests.endpoint(database, url: slowURL, events: [.deliveryCreated])
            // Twelve deliveries for the hanging endpoint alone, older than anything the fast one gets.
            try await Self.deliveries(database, "OLD", count: 12)
            let (fast, _) = try await WebhookOutboxTests.endpoint(database, url: fastURL, events: [.deliveryCreated])
            try await Self.deliveries(database, "NEW", count: 6)

            let transport = HangingTransport(hangingURL: slowURL)
            var settings = WebhookSettings()
            settings.concurrency = 8
            settings.concurrencyPerEndpoint = 2
            settings.pollInterval = .seconds(1)
            let sender = WebhookSender(queue: WebhookDeliveryQueue(database: database), box: WebhookOutboxTests.box,
                                       urlGuard: WebhookURLGuard(resolver: TableResolver(table: [:]), allowsPrivateNetworks: true),
                                       transport: transport, settings: settings, notificationsURL: nil)
            let running = Task { await sender.sendUntilCancelled() }
            func succeeded(_ endpoint: UUID) async throws -> Int {
                try await WebhookOutboxTests.count(
                    "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '\(endpoint)' AND state = 'succeeded'", in: database)
            }
            // A bound for a busy machine, not a timing claim: before the fix the fast endpoint got
            // no slot at all while the hanging posts lasted (here: ever), and this wait ran out.
            let deadline = ContinuousClock.now + .seconds(120)
            while try await succeeded(fast) < 6, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let posts = transport.posts
            let fastDone = try await succeeded(fast)
            running.cancel()
            await running.value

            #expect(fastDone == 6, "the fast endpoint's deliveries waited behind the hanging one's: \(posts)")
            #expect(posts.filter { $0 == fastURL }.count == 6)
            // The hanging endpoint holds exactly its 2 slots: no third post began while those hang.
            #expect(posts.filter { $0 == slowURL }.count == 2, "\(posts)")
            #expect(try await succeeded(slow) == 0)
        }
    }
}
