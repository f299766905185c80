import CountersignClient
import Foundation
import Testing

@Suite("CourierClient retries and problems (scripted transport)")
struct CourierClientTests {
    func client(_ transport: ScriptedTransport, _ sleeps: RecordedSleeps, attempts: Int = 4) -> CourierClient {
        CourierClient(baseURL: URL(string: "http://127.0.0.1:1")!, token: "t0ken", transport: transport,
                      retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: 0.5, maxDelay: 30), sleep: sleeps.sleep)
    }

    @Test("503 busy and 429 are retried after their Retry-After, then the 201 is the answer; every attempt is the same request")
    func retriesUntilStored() async throws {
        let transport = ScriptedTransport([.noAnswer, ScriptedTransport.problem(503, "busy", retryAfter: "1"),
                                           ScriptedTransport.problem(429, "rate_limited", retryAfter: "7"), ScriptedTransport.created()])
        let sleeps = RecordedSleeps()
        let proof = try PreparedProof(try Samples.submission())
        let receipt = try await client(transport, sleeps).upload(proof)
        #expect(receipt.proofID == "p-1" && receipt.flags == ["no_location"] && !receipt.replayed)
        #expect(sleeps.all.count == 3)
        #expect(sleeps.all[0] >= 0 && sleeps.all[0] < 0.5)   // backoff with jitter after no answer
        #expect(Array(sleeps.all.dropFirst()) == [1, 7])    // then exactly what the server asked for
        let requests = transport.requests
        #expect(requests.count == 4)
        #expect(Set(requests.map { $0.headers["Idempotency-Key"] }) == [proof.idempotencyKey])
        #expect(Set(requests.map { $0.body }) == [Array(proof.body)])
        #expect(requests[0].url.absoluteString == "http://127.0.0.1:1/v1/deliveries/TRK-1/proof")
        #expect(requests[0].headers["Content-Encoding"] == "gzip" && requests[0].headers["Authorization"] == "Bearer t0ken")
    }

    @Test("a definitive 4xx is never retried and comes back as its problem, field errors included")
    func definitiveRefusal() async throws {
        let transport = ScriptedTransport([ScriptedTransport.problem(422, "validation_failed", errors:
            #"[{"field":"/captured_at","message":"needs an offset","code":"missing_offset"}]"#)])
        let sleeps = RecordedSleeps()
        let proof = try PreparedProof(try Samples.submission())
        do {
            _ = try await client(transport, sleeps).upload(proof)
            Issue.record("a 422 was a success")
        } catch {
            #expect(error == .problem(Problem(
                status: 422, code: "validation_failed", title: "T", detail: "D", type: "urn:countersign:problem:validation_failed",
                requestID: "r1", errors: [.init(field: "/captured_at", message: "needs an offset", code: "missing_offset")])))
        }
        #expect(transport.requests.count == 1 && sleeps.all.isEmpty)
    }

    @Test("no answer on every attempt ends with the transport error after maxAttempts")
    func networkDown() async throws {
        let transport = ScriptedTransport([])
        let sleeps = RecordedSleeps()
        let proof = try PreparedProof(try Samples.submission())
        do {
            _ = try await client(transport, sleeps, attempts: 3).upload(proof)
            Issue.record("an upload without a network succeeded")
        } catch {
            guard case .transport = error else { Issue.record("expected .transport, got \(error)"); return }
        }
        #expect(transport.requests.count == 3 && sleeps.all.count == 2)
    }

    @Test("a replayed answer is a success marked replayed; a non-problem error body still has a code")
    func replayAndOpaqueErrors() async throws {
        let replay = ScriptedTransport([ScriptedTransport.created(replayed: true)])
        #expect(try await client(replay, RecordedSleeps()).upload(try PreparedProof(try Samples.submission())).replayed)

        let html = ScriptedTransport([.answer(HTTPResponseData(status: 404, headers: ["content-type": "text/html"], body: Array("<h1>nope</h1>".utf8)))])
        do {
            _ = try await client(html, RecordedSleeps()).delivery(reference: "TRK-1")
            Issue.record("a 404 was a success")
        } catch {
            #expect(error.problemCode == "http_404")
        }
    }

    @Test("a reference cannot leave its path segment")
    func referenceEncoded() async throws {
        let transport = ScriptedTransport([ScriptedTransport.problem(404, "delivery_not_found")])
        _ = try? await client(transport, RecordedSleeps()).delivery(reference: "../audit/events?x=1")
        #expect(transport.requests.first?.url.absoluteString == "http://127.0.0.1:1/v1/deliveries/..%2Faudit%2Fevents%3Fx%3D1")
    }
}
