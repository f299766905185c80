import CountersignClient
import Foundation
import Testing

@Suite("RetryPolicy and Retry-After")
struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.5, maxDelay: 8)

    @Test("no answer, 5xx and 429 are retried; every other 4xx is final", arguments: [
        (RetryPolicy.Outcome.noAnswer, true),
        (.answer(status: 500, retryAfter: nil, code: "internal_error"), true),
        (.answer(status: 502, retryAfter: nil, code: "http_502"), true),
        (.answer(status: 503, retryAfter: 1, code: "busy"), true),
        (.answer(status: 429, retryAfter: 3, code: "rate_limited"), true),
        (.answer(status: 409, retryAfter: 1, code: "idempotency_key_in_flight"), true),
        (.answer(status: 409, retryAfter: nil, code: "proof_already_recorded"), false),
        (.answer(status: 400, retryAfter: nil, code: "invalid_gzip"), false),
        (.answer(status: 401, retryAfter: nil, code: "unauthorized"), false),
        (.answer(status: 403, retryAfter: nil, code: "forbidden"), false),
        (.answer(status: 404, retryAfter: nil, code: "delivery_not_found"), false),
        (.answer(status: 413, retryAfter: nil, code: "body_too_large"), false),
        (.answer(status: 422, retryAfter: nil, code: "blank_signature"), false),
        (.answer(status: 422, retryAfter: nil, code: "idempotency_key_reused"), false),
    ])
    func retryable(outcome: RetryPolicy.Outcome, expected: Bool) {
        #expect(RetryPolicy.isRetryable(outcome) == expected)
        let decision = policy.decide(after: 1, outcome, random: { 0.5 })
        #expect((decision != .stop) == expected)
    }

    @Test("Retry-After is honoured, capped at maxDelay, instead of the backoff")
    func retryAfterHonoured() {
        #expect(policy.decide(after: 1, .answer(status: 503, retryAfter: 2, code: "busy"), random: { 0 }) == .retry(after: 2))
        #expect(policy.decide(after: 1, .answer(status: 429, retryAfter: 3600, code: "rate_limited"), random: { 0 }) == .retry(after: 8))
    }

    @Test("backoff doubles per attempt up to maxDelay, with full jitter below the ceiling")
    func backoff() {
        #expect([1, 2, 3, 4, 5, 6, 40].map(policy.backoffCeiling(after:)) == [0.5, 1, 2, 4, 8, 8, 8])
        #expect(policy.decide(after: 3, .noAnswer, random: { 0.25 }) == .retry(after: 0.5))
        #expect(policy.decide(after: 3, .noAnswer, random: { 0 }) == .retry(after: 0))
        for attempt in 1...4 {
            guard case .retry(let delay) = policy.decide(after: attempt, .noAnswer) else {
                Issue.record("attempt \(attempt) was not retried")
                continue
            }
            #expect(delay >= 0 && delay < policy.backoffCeiling(after: attempt))
        }
    }

    @Test("the last attempt stops, whatever the outcome")
    func attemptsRunOut() {
        #expect(policy.decide(after: 5, .noAnswer) == .stop)
        #expect(policy.decide(after: 5, .answer(status: 503, retryAfter: 1, code: "busy")) == .stop)
        #expect(RetryPolicy(maxAttempts: 1).decide(after: 1, .noAnswer) == .stop)
    }

    @Test("Retry-After: delay-seconds, the three HTTP-date forms, and junk")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 784_111_777 - 30)  // 30 s before Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.seconds("120") == 120)
        #expect(RetryAfter.seconds(" 1 ") == 1)
        #expect(RetryAfter.seconds("0") == 0)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 30)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == 30)
        #expect(RetryAfter.seconds("Sun Nov  6 08:49:37 1994", now: now) == 30)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now.addingTimeInterval(3600)) == 0)
        #expect((RetryAfter.seconds("99999999999999999999999") ?? 0) >= 86_400)  // saturates, never overflows
        for junk in [nil, "", "soon", "-1", "1.5", "12abc", "Sun, 06 Nov 1994"] as [String?] {
            #expect(RetryAfter.seconds(junk, now: now) == nil, "\(junk ?? "nil")")
        }
    }
}
