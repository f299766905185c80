import Foundation
import Testing
@testable import Webhooks

@Suite("Standard Webhooks signatures and secrets")
struct WebhookSigningTests {
    @Test("the specification's example signs to its published signature")
    func specificationVector() throws {
        // The Standard Webhooks reference libraries' test vector.
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let header = try WebhookSignature.header(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                                                 body: Array(#"{"test": 2432232314}"#.utf8), secrets: [secret])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("during a rotation both secrets sign, space-separated, and each verifies on its own")
    func rotation() throws {
        let new = try WebhookSecret.generate(), old = try WebhookSecret.generate()
        let body = Array(#"{"type":"webhook.test"}"#.utf8)
        let header = try WebhookSignature.header(id: "msg_1", timestamp: 1_700_000_000, body: body, secrets: [new, old])
        #expect(header.split(separator: " ").count == 2)
        #expect(try WebhookSignature.verify(header: header, id: "msg_1", timestamp: 1_700_000_000, body: body, secret: new))
        #expect(try WebhookSignature.verify(header: header, id: "msg_1", timestamp: 1_700_000_000, body: body, secret: old))
        #expect(try !WebhookSignature.verify(header: header, id: "msg_1", timestamp: 1_700_000_001, body: body, secret: old))
        #expect(try !WebhookSignature.verify(header: header, id: "msg_1", timestamp: 1_700_000_000, body: body + [0x20],
                                             secret: new))
    }

    @Test("secrets read back from their text; the box opens only for the endpoint it was sealed for")
    func secretsAtRest() throws {
        let secret = try WebhookSecret.generate()
        #expect(secret.text.hasPrefix("whsec_") && secret.bytes.count == 24)
        #expect(WebhookSecret(secret.text) == secret)
        #expect(WebhookSecret("whsec_") == nil && WebhookSecret("nope") == nil && WebhookSecret("whsec_***") == nil)
        let box = try WebhookSecretBox(encodedKey: Data(repeating: 7, count: 32).base64EncodedString())
        let a = UUID(), b = UUID()
        let sealed = try box.seal(secret, for: a)
        #expect(try box.open(sealed, for: a) == secret)
        #expect(throws: WebhookSecretBox.Failure.self) { try box.open(sealed, for: b) }
        let other = try WebhookSecretBox(encodedKey: String(repeating: "ab", count: 32))
        #expect(throws: WebhookSecretBox.Failure.self) { try other.open(sealed, for: a) }
        #expect(throws: WebhookSecretBox.Failure.invalidKey) { try WebhookSecretBox(encodedKey: "c2hvcnQ=") }
    }

    @Test("retries back off exponentially with jitter, honour Retry-After, and stop once the window is spent")
    func retrySchedule() {
        let schedule = RetrySchedule(base: .seconds(5), maximum: .seconds(3600), window: .seconds(86_400))
        let queued = Date(timeIntervalSince1970: 1_000_000), now = queued.addingTimeInterval(10)
        func delay(_ attempt: Int, jitter: Double, retryAfter: Duration? = nil) -> Double? {
            schedule.nextAttempt(after: attempt, queuedAt: queued, now: now, retryAfter: retryAfter, jitter: jitter)?
                .timeIntervalSince(now)
        }
        #expect(delay(1, jitter: 0) == 2.5 && delay(1, jitter: 1) == 5)
        #expect(delay(4, jitter: 1) == 40)
        #expect(delay(30, jitter: 1) == 3600 && delay(30, jitter: 0) == 1800)
        #expect(delay(1, jitter: 1, retryAfter: .seconds(120)) == 120)
        #expect(delay(1, jitter: 1, retryAfter: .seconds(1)) == 5)
        #expect(schedule.nextAttempt(after: 40, queuedAt: queued, now: queued.addingTimeInterval(86_399), retryAfter: nil) != nil)
        #expect(schedule.nextAttempt(after: 40, queuedAt: queued, now: queued.addingTimeInterval(86_400), retryAfter: nil) == nil)
        #expect(RetrySchedule.parseRetryAfter("30", now: now) == .seconds(30))
        #expect(RetrySchedule.parseRetryAfter("soon", now: now) == nil)
        let httpDate = RetrySchedule.parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT",
                                                     now: Date(timeIntervalSince1970: 784_111_717))
        #expect(httpDate == .seconds(60))
    }
}
