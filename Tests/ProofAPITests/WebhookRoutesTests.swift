import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport
import Webhooks

@Suite("Webhook routes", .needsDatabase)
struct WebhookRoutesTests {
    static func settings(allowPrivate: Bool) -> WebhookSettings {
        var settings = WebhookSettings()
        settings.secretsKey = Data(repeating: 3, count: 32).base64EncodedString()
        settings.allowPrivateNetworks = allowPrivate
        return settings
    }

    static func create(_ client: some TestClientProtocol, _ harness: APITestHarness, url: String = "http://127.0.0.1:9/hook",
                       events: String = #"["delivery.created","delivery.delivered"]"#) async throws -> TestResponse {
        try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin),
                                 body: ByteBuffer(string: #"{"url":"\#(url)","events":\#(events),"description":"ERP"}"#))
    }

    @Test("admins register, read, change, pause, rotate, test and delete endpoints; the secret is shown once; all audited")
    func lifecycle() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(webhooks: Self.settings(allowPrivate: true)).test(.router) { client in
                let created = try await Self.create(client, harness)
                #expect(created.status == .created)
                let secret = try #require(created.json["secret"] as? String)
                #expect(secret.hasPrefix("whsec_") && WebhookSecret(secret) != nil)
                let id = try #require(created.json["id"] as? String)
                #expect(created.headers[.location] == "/v1/webhooks/\(id)")
                #expect(created.json["events"] as? [String] == ["delivery.created", "delivery.delivered"])

                let shown = try await client.execute(uri: "/v1/webhooks/\(id)", method: .get, headers: harness.headers(.admin))
                #expect(shown.status == .ok && shown.json["secret"] == nil && shown.json["enabled"] as? Bool == true)
                let listed = try await client.execute(uri: "/v1/webhooks", method: .get, headers: harness.headers(.admin))
                #expect((listed.json["items"] as? [[String: Any]])?.count == 1)
                let stored = try await harness.database.query("SELECT secret_sealed FROM webhook_endpoints").decode([UInt8].self, row: 0, column: 0)
                #expect(!String(decoding: stored, as: UTF8.self).contains(String(secret.dropFirst(6))))  // sealed, not plain

                let paused = try await client.execute(uri: "/v1/webhooks/\(id)", method: .patch, headers: harness.headers(.admin),
                                                      body: ByteBuffer(string: #"{"enabled":false,"events":["delivery.delivered"]}"#))
                #expect(paused.status == .ok && paused.json["enabled"] as? Bool == false && paused.json["disabled_reason"] as? String == "admin")
                #expect(paused.json["events"] as? [String] == ["delivery.delivered"])
                let resumed = try await client.execute(uri: "/v1/webhooks/\(id)", method: .patch, headers: harness.headers(.admin),
                                                       body: ByteBuffer(string: #"{"enabled":true}"#))
                #expect(resumed.json["enabled"] as? Bool == true && resumed.json["disabled_reason"] == nil)

                let rotated = try await client.execute(uri: "/v1/webhooks/\(id)/rotate-secret", method: .post, headers: harness.headers(.admin))
                #expect(rotated.status == .ok)
                #expect((rotated.json["secret"] as? String).map { $0 != secret && $0.hasPrefix("whsec_") } == true)
                #expect(rotated.json["previous_secret_valid_until"] is String)

                let tested = try await client.execute(uri: "/v1/webhooks/\(id)/test", method: .post, headers: harness.headers(.admin))
                #expect(tested.status == .accepted)
                let deliveries = try await client.execute(uri: "/v1/webhooks/\(id)/deliveries", method: .get, headers: harness.headers(.admin))
                let items = try #require(deliveries.json["items"] as? [[String: Any]])
                #expect(items.count == 1 && items[0]["event_type"] as? String == "webhook.test" && items[0]["state"] as? String == "pending")
                #expect((items[0]["webhook_id"] as? String)?.hasPrefix("msg_") == true)
                let deliveryID = try #require(items[0]["id"] as? String)
                let retried = try await client.execute(uri: "/v1/webhooks/\(id)/deliveries/\(deliveryID)/retry", method: .post,
                                                       headers: harness.headers(.admin))
                #expect(retried.status == .accepted)
                let unknown = try await client.execute(uri: "/v1/webhooks/\(id)/deliveries/\(UUID())/retry", method: .post,
                                                       headers: harness.headers(.admin))
                #expect(unknown.status == .notFound)

                let deleted = try await client.execute(uri: "/v1/webhooks/\(id)", method: .delete, headers: harness.headers(.admin))
                #expect(deleted.status == .noContent)
                let gone = try await client.execute(uri: "/v1/webhooks/\(id)", method: .get, headers: harness.headers(.admin))
                #expect(gone.status == .notFound && gone.json["code"] as? String == "webhook_not_found")

                let actions = try await harness.database.query("""
                    SELECT action FROM audit_events WHERE subject = $1 ORDER BY seq
                    """, ["webhook:\(id)"]).rows.map { try $0.decode(String.self, 0) }
                #expect(actions == ["webhook_created", "webhook_updated", "webhook_updated", "webhook_secret_rotated",
                                    "webhook_test_sent", "webhook_delivery_retried", "webhook_deleted"])
            }
        }
    }

    /// The audit details of `action` events of endpoint `id`, oldest first, as the text that was hashed.
    static func auditDetails(_ harness: APITestHarness, id: String, action: String) async throws -> [String] {
        try await harness.database.query("""
            SELECT details_text FROM audit_events WHERE subject = $1 AND action = $2 ORDER BY seq
            """, ["webhook:\(id)", action]).rows.map { try $0.decode(String.self, 0) }
    }

    /// Security issue 41, item 7: `webhook_created` kept `?token=…` in the audit trail for every auditor, for good.
    @Test("audit events keep a webhook URL without its query and fragment, and say they were left out; the chain verifies")
    func auditedURLWithoutQuery() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(webhooks: Self.settings(allowPrivate: true)).test(.router) { client in
                let created = try await Self.create(client, harness, url: "http://127.0.0.1:9/hooks/in?token=s3cr3t-one&x=1#part")
                #expect(created.status == .created)
                let id = try #require(created.json["id"] as? String)
                // The admin still sees (and the sender still uses) the whole URL.
                #expect(created.json["url"] as? String == "http://127.0.0.1:9/hooks/in?token=s3cr3t-one&x=1#part")
                let changed = try await client.execute(uri: "/v1/webhooks/\(id)", method: .patch, headers: harness.headers(.admin),
                                                       body: ByteBuffer(string: #"{"url":"http://127.0.0.1:9/hooks/v2?token=s3cr3t-two"}"#))
                #expect(changed.status == .ok && changed.json["url"] as? String == "http://127.0.0.1:9/hooks/v2?token=s3cr3t-two")
                let plain = try await client.execute(uri: "/v1/webhooks/\(id)", method: .patch, headers: harness.headers(.admin),
                                                     body: ByteBuffer(string: #"{"url":"http://127.0.0.1:9/hooks/v3"}"#))
                #expect(plain.status == .ok)

                let createdDetails = try await Self.auditDetails(harness, id: id, action: "webhook_created")
                let updatedDetails = try await Self.auditDetails(harness, id: id, action: "webhook_updated")
                #expect(createdDetails.count == 1 && updatedDetails.count == 2)
                for text in createdDetails + updatedDetails {
                    #expect(!text.contains("s3cr3t") && !text.contains("token") && !text.contains("part"), "\(text)")
                }
                let first = try #require(try JSONSerialization.jsonObject(with: Data(createdDetails[0].utf8)) as? [String: String])
                #expect(first["url"] == "http://127.0.0.1:9/hooks/in" && first["url_omitted"] == "query,fragment", "\(first)")
                #expect(first["events"] == "delivery.created,delivery.delivered")
                let second = try #require(try JSONSerialization.jsonObject(with: Data(updatedDetails[0].utf8)) as? [String: String])
                #expect(second["url"] == "http://127.0.0.1:9/hooks/v2" && second["url_omitted"] == "query", "\(second)")
                let third = try #require(try JSONSerialization.jsonObject(with: Data(updatedDetails[1].utf8)) as? [String: String])
                #expect(third["url"] == "http://127.0.0.1:9/hooks/v3" && third["url_omitted"] == nil, "\(third)")

                let verified = try await client.execute(uri: "/v1/audit/verify", method: .get, headers: harness.headers(.auditor))
                #expect(verified.status == .ok && verified.json["status"] as? String == "ok", "\(verified.json)")
            }
        }
    }

    /// Security issue 41, item 7: a second rotation replaced the first's previous secret, so it stopped
    /// signing hours before the time the first rotation had announced.
    @Test("a rotation during another's grace period is refused with 409 and the announced secret keeps signing; force rotates, audited")
    func secondRotation() async throws {
        try await APITestHarness.with { harness in
            let settings = Self.settings(allowPrivate: true)
            let box = try WebhookSecretBox(encodedKey: try #require(settings.secretsKey))
            try await harness.application(webhooks: settings).test(.router) { client in
                let created = try await Self.create(client, harness)
                let id = try #require(created.json["id"] as? String)
                let endpointID = try #require(UUID(uuidString: id))
                let original = try #require(created.json["secret"] as? String)
                let rotatePath = "/v1/webhooks/\(id)/rotate-secret"

                /// The secrets the sender signs the next message with, newest first.
                func signingSecrets() async throws -> [String] {
                    #expect(try await client.execute(uri: "/v1/webhooks/\(id)/test", method: .post, headers: harness.headers(.admin)).status == .accepted)
                    let claimed = try await WebhookDeliveryQueue(database: harness.database).claim(limit: 10, lease: .seconds(60))
                    let delivery = try #require(claimed.last)
                    return try ([delivery.secretSealed] + (delivery.previousSecretSealed.map { [$0] } ?? [])).map {
                        try box.open($0, for: endpointID).text
                    }
                }

                let first = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin))
                #expect(first.status == .ok)
                let firstSecret = try #require(first.json["secret"] as? String)
                let announced = try #require(first.json["previous_secret_valid_until"] as? String)
                #expect(try await signingSecrets() == [firstSecret, original])

                // Again, while the original secret still signs: refused, and nothing changed.
                let again = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin))
                #expect(again.status == .conflict && again.json["code"] as? String == "webhook_rotation_in_progress", "\(again.json)")
                #expect(again.headers[.contentType]?.hasPrefix("application/problem+json") == true)
                #expect((again.json["detail"] as? String)?.contains("force") == true)
                let shown = try await client.execute(uri: "/v1/webhooks/\(id)", method: .get, headers: harness.headers(.admin))
                #expect(shown.json["previous_secret_valid_until"] as? String == announced)
                #expect(try await signingSecrets() == [firstSecret, original], "the original keeps the validity its rotation announced")

                // Bad bodies are clear 4xx, and change nothing either.
                let wrongType = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin),
                                                         body: ByteBuffer(string: #"{"force":"yes"}"#))
                #expect(wrongType.status == .unprocessableContent)
                let broken = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin),
                                                      body: ByteBuffer(string: "{"))
                #expect(broken.status == .badRequest)
                let notJSON = try await client.execute(uri: rotatePath, method: .post,
                                                       headers: harness.headers(.admin, [.contentType: "text/plain"]),
                                                       body: ByteBuffer(string: "force"))
                #expect(notJSON.status == .unsupportedMediaType)
                let notForced = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin),
                                                         body: ByteBuffer(string: #"{"force":false}"#))
                #expect(notForced.status == .conflict)

                // Forced: the original stops now, the first rotation's secret signs beside the new one.
                let forced = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin),
                                                      body: ByteBuffer(string: #"{"force":true}"#))
                #expect(forced.status == .ok)
                let forcedSecret = try #require(forced.json["secret"] as? String)
                #expect(try await signingSecrets() == [forcedSecret, firstSecret])

                // Once the grace period is over (made so here), a rotation needs no force.
                _ = try await harness.database.query("""
                    UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = \(endpointID)
                    """)
                let later = try await client.execute(uri: rotatePath, method: .post, headers: harness.headers(.admin))
                #expect(later.status == .ok)

                let details = try await Self.auditDetails(harness, id: id, action: "webhook_secret_rotated").map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])
                }
                #expect(details.count == 3, "the refused rotations are not audited: \(details)")
                #expect(details.map { $0["forced"] } == [nil, "true", nil])
                #expect(details[1]["superseded_valid_until"] != nil && details[0]["previous_valid_until"] != nil)
                let superseded = try #require(details[1]["superseded_valid_until"].flatMap { try? RFC3339Timestamp(parsing: $0).date })
                let promised = try #require(try? RFC3339Timestamp(parsing: announced).date)
                #expect(abs(superseded.timeIntervalSince(promised)) < 0.001, "\(superseded) \(promised)")
            }
        }
    }

    @Test("by default loopback, private, link-local and metadata URLs are refused with 422",
          arguments: ["http://127.0.0.1/hook", "http://[::1]/hook", "http://localhost/hook", "http://169.254.169.254/latest/meta-data/",
                      "http://10.0.0.1/hook", "http://[::ffff:127.0.0.1]/hook", "http://[::ffff:0:127.0.0.1]/hook"])
    func ssrfRefused(url: String) async throws {
        try await APITestHarness.with { harness in
            try await harness.application(webhooks: Self.settings(allowPrivate: false)).test(.router) { client in
                let refused = try await Self.create(client, harness, url: url)
                #expect(refused.status == .unprocessableContent)
                #expect(refused.json["code"] as? String == "webhook_url_refused")
                #expect(try await harness.database.query("SELECT count(*) FROM webhook_endpoints").decode(Int.self, row: 0, column: 0) == 0)
            }
        }
    }

    @Test("bad input is a clear 4xx, other roles are forbidden, and without WEBHOOK_SECRETS_KEY the API answers 503")
    func refusals() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(webhooks: Self.settings(allowPrivate: true)).test(.router) { client in
                #expect(try await Self.create(client, harness, events: #"["delivery.exploded"]"#).status == .unprocessableContent)
                #expect(try await Self.create(client, harness, events: "[]").status == .unprocessableContent)
                #expect(try await Self.create(client, harness, url: "ftp://127.0.0.1/x").status == .unprocessableContent)
                let broken = try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin),
                                                      body: ByteBuffer(string: "{\"url\":"))
                #expect(broken.status == .badRequest)
                let missing = try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin),
                                                       body: ByteBuffer(string: "{}"))
                #expect(missing.status == .unprocessableContent)
                for role in [Role.dispatcher, .auditor, .courier] {
                    let forbidden = try await client.execute(uri: "/v1/webhooks", method: .get, headers: harness.headers(role))
                    #expect(forbidden.status == .forbidden)
                }
                #expect(try await client.execute(uri: "/v1/webhooks/not-a-uuid", method: .get, headers: harness.headers(.admin)).status == .notFound)
                let limit = try await client.execute(uri: "/v1/webhooks/\(UUID())/deliveries?limit=0", method: .get, headers: harness.headers(.admin))
                #expect(limit.status == .unprocessableContent)
            }
            try await harness.application().test(.router) { client in
                let off = try await Self.create(client, harness)
                #expect(off.status == .serviceUnavailable && off.json["code"] as? String == "webhooks_not_configured")
            }
        }
    }
}
