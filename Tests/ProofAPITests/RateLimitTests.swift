import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport

@Suite("Rate limiting per API key")
struct RateLimitTests {
    @Test("a token bucket allows the burst, then the rate, and says when to retry")
    func bucket() {
        let limiter = RateLimiter(ratePerSecond: 2, burst: 3)
        let key = UUID()
        #expect((0..<3).map { _ in limiter.acquire(key, now: 100) } == [.allowed, .allowed, .allowed])
        #expect(limiter.acquire(key, now: 100) == .limited(retryAfterSeconds: 1))
        #expect(limiter.acquire(key, now: 100.5) == .allowed)  // half a second refills one token at 2/s
        #expect(limiter.acquire(key, now: 100.5) == .limited(retryAfterSeconds: 1))
        #expect(limiter.acquire(UUID(), now: 100.5) == .allowed)  // other keys have their own bucket
        #expect((0..<3).map { _ in limiter.acquire(key, now: 1000) } == [.allowed, .allowed, .allowed])  // refilled, capped at the burst
        #expect(limiter.acquire(key, now: 1000) != .allowed)

        let slow = RateLimiter(ratePerSecond: 0.1, burst: 1)
        #expect(slow.acquire(key, now: 0) == .allowed)
        #expect(slow.acquire(key, now: 0) == .limited(retryAfterSeconds: 10))
    }

    @Test("tracking stays bounded: past its capacity the least recently seen keys are forgotten")
    func bounded() {
        let limiter = RateLimiter(ratePerSecond: 1, burst: 1, capacity: 4)
        let keys = (0..<10).map { _ in UUID() }
        for (index, key) in keys.enumerated() { #expect(limiter.acquire(key, now: Double(index)) == .allowed) }
        // The newest key is still tracked (empty bucket); the oldest was forgotten (full again).
        #expect(limiter.acquire(keys[9], now: 9) != .allowed)
        #expect(limiter.acquire(keys[0], now: 9) == .allowed)
    }

    @Test("over HTTP: 429 rate_limited with Retry-After for the key over its limit, others unaffected",
          .needsDatabase)
    func http() async throws {
        try await APITestHarness.with { harness in
            let policy = APIPolicy(rateLimitPerSecond: 0.01, rateLimitBurst: 2)
            try await harness.application(policy: policy).test(.router) { client in
                var statuses: [HTTPResponse.Status] = []
                var last: TestResponse?
                for _ in 0..<3 {
                    let response = try await client.execute(uri: "/v1/deliveries", method: .get, headers: harness.headers(.dispatcher))
                    statuses.append(response.status)
                    last = response
                }
                #expect(statuses == [.ok, .ok, .tooManyRequests])
                #expect(last?.problemCode == "rate_limited")
                #expect(last?.headers[.retryAfterHeader].flatMap { Int($0) }.map { $0 >= 1 } == true)
                #expect(last?.headers[.contentType] == "application/problem+json")
                let other = try await client.execute(uri: "/v1/deliveries", method: .get, headers: harness.headers(.courier))
                #expect(other.status == .ok)
            }
        }
    }
}
