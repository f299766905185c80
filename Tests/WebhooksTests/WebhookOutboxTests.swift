import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport
@testable import Webhooks

/// A transport that answers from a script and keeps what it was sent; no network at all.
final class ScriptedTransport: WebhookTransport, @unchecked Sendable {
    struct Post { var url: String; var headers: [String: String]; var body: [UInt8] }
    private let lock = NSLock()
    private var answers: [WebhookResponse]
    private var sent: [Post] = []

    init(answers: [WebhookResponse]) { self.answers = answers }

    var posts: [Post] { lock.withLock { sent } }

    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> WebhookResponse {
        try lock.withLock {
            sent.append(Post(url: url, headers: Dictionary(headers, uniquingKeysWith: { a, _ in a }), body: body))
            guard !answers.isEmpty else { throw SystemHostResolver.Failure(host: url, message: "connection refused (scripted)") }
            return answers.removeFirst()
        }
    }

    func shutdown() async throws {}
}

@Suite("Webhook outbox and sender", .needsDatabase)
struct WebhookOutboxTests {
    static let box = try! WebhookSecretBox(key: [UInt8](repeating: 9, count: 32))

    static func endpoint(_ database: PostgresClient, url: String = "http://127.0.0.1:9/hook",
                         events: [WebhookEventType] = [.deliveryCreated, .deliveryDelivered]) async throws -> (UUID, WebhookSecret) {
        let id = UUID(), secret = try WebhookSecret.generate()
        _ = try await WebhookEndpointRepository(database: database).create(
            id: id, url: url, description: "test", events: events, secretSealed: try box.seal(secret, for: id), origin: .system)
        return (id, secret)
    }

    static func count(_ sql: String, in database: PostgresClient) async throws -> Int {
        try await database.query(sql).decode(Int.self, row: 0, column: 0)
    }

    static func sender(_ database: PostgresClient, transport: any WebhookTransport, resolver: any HostResolver = TableResolver(table: [:]),
                       allowPrivate: Bool = true, disableAfter: Duration = .seconds(3600)) -> WebhookSender {
        var settings = WebhookSettings()
        settings.retryBase = .seconds(10)
        settings.disableAfter = disableAfter
        return WebhookSender(queue: WebhookDeliveryQueue(database: database), box: box,
                             urlGuard: WebhookURLGuard(resolver: resolver, allowsPrivateNetworks: allowPrivate),
                             transport: transport, settings: settings, notificationsURL: nil)
    }

    static func proof(uploadedBy: UUID) -> NewProof { NewProof.sample(uploadedBy: uploadedBy) }

    @Test("an event exists if and only if its change committed; each is queued for the endpoints subscribed to it")
    func eventIffCommit() async throws {
        try await ScratchDatabase.with(prefix: "wh_outbox") { _, database in
            let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
            _ = try await deliveries.create(NewDelivery(reference: "BEFORE", recipientName: "A", address: "B", destination: nil), by: nil)
            // Nobody subscribed yet: no event row at all (a deployment without webhooks pays only the look-up).
            #expect(try await Self.count("SELECT count(*) FROM webhook_events", in: database) == 0)
            #expect(try await Self.count("SELECT count(*) FROM webhook_deliveries", in: database) == 0)

            let (endpointID, _) = try await Self.endpoint(database)
            let (_, _) = try await Self.endpoint(database, events: [.deliveryCancelled])
            let draft = NewDelivery(reference: "R-1", recipientName: "Ada", address: "1 Road", destination: nil)
            _ = try await deliveries.create(draft, by: nil)
            _ = try await deliveries.create(draft, by: nil)  // an idempotent repeat changes nothing, so announces nothing
            #expect(try await Self.count("SELECT count(*) FROM webhook_events WHERE type = 'delivery.created'", in: database) == 1)
            #expect(try await Self.count("SELECT count(*) FROM webhook_deliveries", in: database) == 1)

            // A change that rolls back takes its event with it.
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await database.withTransaction { session in
                    WebhookOutbox.enqueue(.deliveryCancelled(reference: "R-1", reason: "test", cancelledAt: Date()), in: session)
                    _ = try await session.query("SELECT 1")
                    throw Abort()
                }
            }
            #expect(try await Self.count("SELECT count(*) FROM webhook_events WHERE type = 'delivery.cancelled'", in: database) == 0)

            // The proof's transaction carries delivery.delivered; a second proof (refused, rolled back) carries nothing.
            let (key, _) = try await APIKeyRepository(database: database).create(name: "courier", role: .courier)
            let proof = Self.proof(uploadedBy: key.id)
            try await ProofRepository(database: database, dataKeys: TestDataKeys.provider).record(proof, reference: "R-1")
            await #expect(throws: ProofStoreError.self) {
                try await ProofRepository(database: database, dataKeys: TestDataKeys.provider).record(Self.proof(uploadedBy: key.id), reference: "R-1")
            }
            #expect(try await Self.count("SELECT count(*) FROM webhook_events WHERE type = 'delivery.delivered'", in: database) == 1)
            #expect(try await Self.count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '\(endpointID)'", in: database) == 2)

            // Payloads: Standard Webhooks shape; `sequence` orders one delivery's events.
            let payloads = try await database.query("""
                SELECT payload FROM webhook_events e JOIN deliveries d ON d.id = e.delivery_id WHERE d.reference = 'R-1' ORDER BY e.id
                """).rows.map { try $0.decode(String.self, 0) }
            let documents = try payloads.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(documents.map { $0["type"] as? String } == ["delivery.created", "delivery.delivered"])
            let data = documents.map { $0["data"] as! [String: Any] }
            #expect((data[0]["sequence"] as! Int) < (data[1]["sequence"] as! Int))
            #expect(data[1]["proof_id"] as? String == proof.id.uuidString.lowercased())
            let digests = data[1]["digests"] as! [String: String], links = data[1]["links"] as! [String: String]
            #expect(digests["png_sha256"] == Hex.encode(proof.rendering.pngSHA256))
            #expect(links["png"] == "/v1/deliveries/R-1/proof/signature.png")
            #expect((documents[0]["timestamp"] as? String)?.hasSuffix("Z") == true)
        }
    }

    @Test("the sender signs with Standard Webhooks headers; 2xx completes the delivery and ends the failure run")
    func signsAndSucceeds() async throws {
        try await ScratchDatabase.with(prefix: "wh_send") { _, database in
            let (endpointID, secret) = try await Self.endpoint(database)
            _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(
                NewDelivery(reference: "S-1", recipientName: "A", address: "B", destination: nil), by: nil)
            let transport = ScriptedTransport(answers: [WebhookResponse(status: 204, retryAfter: nil)])
            let sender = Self.sender(database, transport: transport)
            let claimed = try await WebhookDeliveryQueue(database: database).claim(limit: 10, lease: .seconds(60))
            #expect(claimed.count == 1)
            #expect(try await WebhookDeliveryQueue(database: database).claim(limit: 10, lease: .seconds(60)).isEmpty)  // leased
            for delivery in claimed { await sender.attempt(delivery) }
            let post = try #require(transport.posts.first)
            let id = try #require(post.headers["webhook-id"]), timestamp = try #require(post.headers["webhook-timestamp"].flatMap { Int64($0) })
            #expect(id == "msg_" + claimed[0].messageID.uuidString.lowercased())
            #expect(try WebhookSignature.verify(header: post.headers["webhook-signature"] ?? "", id: id, timestamp: timestamp,
                                                body: post.body, secret: secret))
            #expect(post.body == Array(claimed[0].payload.utf8))
            let records = try await WebhookDeliveryQueue(database: database).deliveries(endpointID: endpointID, limit: 10)
            #expect(records.map(\.state) == ["succeeded"])
            #expect(records[0].attempts.map(\.statusCode) == [204])
        }
    }

    @Test("failures back off, Retry-After pushes the next attempt out, and sustained failure disables the endpoint (audited)")
    func failuresAndDisable() async throws {
        try await ScratchDatabase.with(prefix: "wh_fail") { _, database in
            let (endpointID, _) = try await Self.endpoint(database)
            _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(
                NewDelivery(reference: "F-1", recipientName: "A", address: "B", destination: nil), by: nil)
            let queue = WebhookDeliveryQueue(database: database)
            let transport = ScriptedTransport(answers: [WebhookResponse(status: 429, retryAfter: "600"),
                                                        WebhookResponse(status: 500, retryAfter: nil)])
            let patient = Self.sender(database, transport: transport)
            let first = try await queue.claim(limit: 1, lease: .seconds(60))[0]
            await patient.attempt(first)
            #expect(try await Self.count("""
                SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' AND attempts = 1
                    AND next_attempt_at >= now() + interval '590 seconds'
                """, in: database) == 1)
            #expect(try await WebhookEndpointRepository(database: database).find(endpointID)?.failingSince != nil)
            // Due again (as if the time had passed): a 500 with an impatient sender disables the endpoint.
            _ = try await database.query("UPDATE webhook_deliveries SET next_attempt_at = now()")
            let impatient = Self.sender(database, transport: transport, disableAfter: .zero)
            await impatient.attempt(try await queue.claim(limit: 1, lease: .seconds(60))[0])
            let endpoint = try #require(try await WebhookEndpointRepository(database: database).find(endpointID))
            #expect(!endpoint.enabled && endpoint.disabledReason == "failing")
            #expect(try await Self.count("SELECT count(*) FROM audit_events WHERE action = 'webhook_disabled'", in: database) == 1)
            // Disabled: nothing is claimed, however due; re-enabled by an admin, it flows again.
            _ = try await database.query("UPDATE webhook_deliveries SET next_attempt_at = now()")
            #expect(try await queue.claim(limit: 10, lease: .seconds(60)).isEmpty)
            _ = try await WebhookEndpointRepository(database: database).update(endpointID, WebhookEndpointChange(enabled: true), origin: .system)
            #expect(try await queue.claim(limit: 10, lease: .seconds(60)).count == 1)
            let records = try await queue.deliveries(endpointID: endpointID, limit: 10)
            #expect(records[0].attempts.map(\.statusCode) == [429, 500])
        }
    }

    @Test("a name re-pointed at a private address after registration is refused at send time: nothing is posted")
    func refusedAtSendTime() async throws {
        try await ScratchDatabase.with(prefix: "wh_ssrf") { _, database in
            let (endpointID, _) = try await Self.endpoint(database, url: "http://rebound.example/hook")
            _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(
                NewDelivery(reference: "X-1", recipientName: "A", address: "B", destination: nil), by: nil)
            let transport = ScriptedTransport(answers: [WebhookResponse(status: 200, retryAfter: nil)])
            let sender = Self.sender(database, transport: transport, resolver: TableResolver(table: ["rebound.example": ["10.0.0.7"]]),
                                     allowPrivate: false)
            await sender.attempt(try await WebhookDeliveryQueue(database: database).claim(limit: 1, lease: .seconds(60))[0])
            #expect(transport.posts.isEmpty)
            let records = try await WebhookDeliveryQueue(database: database).deliveries(endpointID: endpointID, limit: 10)
            #expect(records[0].state == "pending")
            // The reason, not the internal address the name pointed at (the admin API shows this error).
            let error = try #require(records[0].attempts.first?.error)
            #expect(error.contains("refused") && error.contains("private") && !error.contains("10.0.0.7"), "\(error)")
        }
    }

    @Test("replicas claiming at once never take the same delivery (FOR UPDATE SKIP LOCKED)")
    func disjointClaims() async throws {
        try await ScratchDatabase.with(prefix: "wh_claim", poolSize: 8) { _, database in
            _ = try await Self.endpoint(database)
            for index in 0..<40 {
                _ = try await DeliveryRepository(database: database, dataKeys: TestDataKeys.provider).create(
                    NewDelivery(reference: "C-\(index)", recipientName: "A", address: "B", destination: nil), by: nil)
            }
            let queue = WebhookDeliveryQueue(database: database)
            let claims = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for _ in 0..<6 { group.addTask { try await queue.claim(limit: 10, lease: .seconds(60)).map(\.id) } }
                return try await group.reduce(into: [UUID]()) { $0 += $1 }
            }
            #expect(claims.count == 40 && Set(claims).count == 40)
        }
    }
}
