import CountersignClient
import Foundation
import Testing
import TestSupport

/// The SDK against the real server: URLSession on Linux, gzip bodies, idempotent replays, real
/// problem documents, and the queue across an outage and a crash.
@Suite("CountersignClient against a live server", .needsDatabase)
struct LiveServerTests {
    static func withServer(_ body: (LiveServer) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.create(prefix: "sdk")
        let server = try await LiveServer(scratch: scratch)
        do {
            try await body(server)
        } catch {
            server.stop()
            await scratch.drop()
            throw error
        }
        server.stop()
        await scratch.drop()
    }

    /// The error `body` failed with; `nil` when it succeeded.
    static func failure(_ body: () async throws(CountersignClientError) -> Void) async -> CountersignClientError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    /// The problem code `body` failed with; `nil` when it succeeded.
    static func problemCode(_ body: () async throws(CountersignClientError) -> Void) async -> String? {
        guard let error = await failure(body) else { return nil }
        return error.problemCode ?? "\(error)"
    }

    static func delivery(_ reference: String) -> NewDelivery {
        NewDelivery(reference: reference, recipientName: "Ada Lovelace", address: "1 Main St",
                    destination: .init(lat: 52.5201, lon: 13.4051))
    }

    @Test("upload with gzip, a replay with the same key, and the server's refusals as typed problems")
    func uploadReplayRefusals() async throws {
        try await Self.withServer { server in
            let dispatcher = CourierClient(baseURL: server.baseURL, token: try server.createKey(role: "dispatcher"))
            let courier = CourierClient(baseURL: server.baseURL, token: try server.createKey(role: "courier"))
            let created = try await dispatcher.createDelivery(Self.delivery("SDK-1"))
            #expect(created.status == "pending" && created.proof == nil)

            let proof = try PreparedProof(try Samples.submission(reference: "SDK-1"))
            #expect(proof.contentEncoding == "gzip")
            let receipt = try await courier.upload(proof)
            #expect(!receipt.replayed && receipt.reference == "SDK-1" && receipt.flags.isEmpty)
            #expect(receipt.pointsSHA256.count == 64)

            // The same request again (a retry after a lost answer): the stored proof, not a second one.
            let again = try await courier.upload(proof)
            #expect(again.replayed && again.proofID == receipt.proofID)

            // Another key for the same delivery: the definitive 409, not retried.
            let other = try PreparedProof(try Samples.submission(reference: "SDK-1"))
            #expect(await Self.problemCode { () async throws(CountersignClientError) in _ = try await courier.upload(other) } == "proof_already_recorded")

            let delivered = try await courier.delivery(reference: "SDK-1")
            #expect(delivered.status == "delivered" && delivered.proof?.proofID == receipt.proofID)

            // A body the server refuses field by field: the problem's errors[] arrive typed. For a
            // pending delivery: an upload for a delivered one is 409 before its body is parsed.
            _ = try await dispatcher.createDelivery(Self.delivery("SDK-3"))
            var bad = try Samples.submission(reference: "SDK-3")
            bad.capturedAt = "2026-11-25T05:00:00"
            let badProof = try PreparedProof(bad)
            let refusal = await Self.failure { () async throws(CountersignClientError) in _ = try await courier.upload(badProof) }
            guard case .problem(let problem)? = refusal else {
                Issue.record("a timestamp without offset: \(String(describing: refusal))")
                return
            }
            #expect(problem.status == 422 && problem.code == "validation_failed")
            #expect(problem.errors.contains { $0.field == "/captured_at" && $0.code == "missing_offset" })
            #expect(problem.requestID != nil)

            // Unknown delivery and a courier creating deliveries: 404 and 403, each one request.
            #expect(await Self.problemCode { () async throws(CountersignClientError) in _ = try await courier.delivery(reference: "NOPE-1") } == "delivery_not_found")
            #expect(await Self.problemCode { () async throws(CountersignClientError) in _ = try await courier.createDelivery(Self.delivery("SDK-2")) } == "forbidden")
        }
    }

    @Test("queued while the server is down, sent when it is up; a crash between answer and removal stores nothing twice")
    func queueAcrossOutageAndCrash() async throws {
        try await Samples.withFolder { folder in
            let scratch = try await ScratchDatabase.create(prefix: "sdkq")
            let port = try LiveServer.freePort()
            let references = (1...4).map { "Q-\($0)" }
            let queue = try ProofQueue(folder: folder)
            for reference in references { try await queue.enqueue(try PreparedProof(try Samples.submission(reference: reference))) }

            // Nothing listens on the port yet: no answer, everything stays queued.
            let offline = CourierClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, token: "unused",
                                        retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01))
            let down = try await queue.drain(with: offline)
            #expect(down.sent.isEmpty && down.remaining == 4)
            guard case .transport = down.stoppedBy else { Issue.record("\(String(describing: down.stoppedBy))"); return }

            let server = try await LiveServer(scratch: scratch, port: port)
            defer { server.stop() }
            let dispatcher = CourierClient(baseURL: server.baseURL, token: try server.createKey(role: "dispatcher"))
            for reference in references { _ = try await dispatcher.createDelivery(Self.delivery(reference)) }
            let courier = CourierClient(baseURL: server.baseURL, token: try server.createKey(role: "courier"))

            // A process that sent the oldest item and was killed before removing its file.
            let oldest = try #require(try await queue.pending().first)
            let firstReceipt = try await courier.upload(oldest.proof)

            let report = try await ProofQueue(folder: folder).drain(with: courier)
            #expect(report.sent.map(\.reference) == references)
            #expect(report.sent.map(\.replayed) == [true, false, false, false])
            #expect(report.sent.first?.proofID == firstReceipt.proofID)
            #expect(report.rejected.isEmpty && report.stoppedBy == nil)
            #expect(try await queue.pending().isEmpty)
            for reference in references {
                #expect(try await courier.delivery(reference: reference).status == "delivered")
            }
            server.stop()
            await scratch.drop()
        }
    }
}
