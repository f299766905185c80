import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofStore
import Testing
import TestSupport

@Suite("Idempotency and concurrency", .needsDatabase)
struct IdempotencyTests {
    @Test("same key and body replays the original response; same key with another body is 422")
    func replayAndMismatch() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let uri = "/v1/deliveries/\(reference)/proof"
                let headers = harness.headers(.courier, [.idempotencyKey: "retry-1"])
                let body = Samples.proofJSON()
                let first = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(first.status == .created)
                #expect(first.headers[.idempotentReplayed] == nil)

                let replay = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(replay.status == .created)
                #expect(replay.headers[.idempotentReplayed] == "true")
                #expect(replay.bytes == first.bytes)
                #expect(replay.headers[.location] == first.headers[.location])

                let other = try await client.execute(uri: uri, method: .post, headers: headers,
                                                     body: ByteBuffer(string: Samples.proofJSON(signer: "Someone Else")))
                #expect(other.status == .unprocessableContent)
                #expect(other.problemCode == "idempotency_key_reused")

                // Another key's namespace is separate: the dispatcher's "retry-1" is a new request (and a 409).
                let dispatcher = try await client.execute(uri: uri, method: .post, headers: harness.headers(.dispatcher, [.idempotencyKey: "retry-1"]),
                                                          body: ByteBuffer(string: body))
                #expect(dispatcher.status == .conflict)
                let count = try await harness.database.query("SELECT count(*) FROM proofs").decode(Int.self, row: 0, column: 0)
                #expect(count == 1)
            }
        }
    }

    @Test("a failed request releases its key, so a corrected retry with the same key succeeds")
    func failureReleasesKey() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let headers = harness.headers(.courier, [.idempotencyKey: "k-404"])
                let body = Samples.proofJSON()
                let early = try await client.execute(uri: "/v1/deliveries/LATER-1/proof", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(early.status == .notFound)
                try await harness.createDelivery(client, reference: "LATER-1")
                let retry = try await client.execute(uri: "/v1/deliveries/LATER-1/proof", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(retry.status == .created)
                #expect(retry.headers[.idempotentReplayed] == nil)
            }
        }
    }

    @Test("the same key while the first request is in flight is 409")
    func inFlight() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let uri = "/v1/deliveries/\(reference)/proof"
                let body = Array(Samples.proofJSON().utf8)
                // Exactly what a first request still running leaves behind.
                let fingerprint = SHA256.hash(Array("POST \(uri)\n\n".utf8) + SHA256.hash(body))
                try await harness.database.query("""
                    INSERT INTO idempotency_records (api_key_id, idempotency_key, request_sha256, state) VALUES ($1, 'busy', $2, 'in_flight')
                    """, [harness.actors[.courier]!.keyID, PostgresBytes(fingerprint)])
                let response = try await client.execute(uri: uri, method: .post, headers: harness.headers(.courier, [.idempotencyKey: "busy"]),
                                                        body: ByteBuffer(bytes: body))
                #expect(response.status == .conflict)
                #expect(response.problemCode == "idempotency_key_in_flight")
                #expect(response.headers[.retryAfterHeader] != nil)
            }
        }
    }

    /// Through `.router`, so that the twenty uploads reach the handler at once: the `.live` client sends them down one
    /// keep-alive connection, where the server answers them one after another.
    @Test("twenty concurrent uploads for one delivery store exactly one proof")
    func concurrentUploads() async throws {
        try await APITestHarness.with(poolSize: 8) { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for index in 0..<20 {
                        group.addTask {
                            try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                     headers: harness.headers(.courier),
                                                     body: ByteBuffer(string: Samples.proofJSON(signer: "Signer \(index)"))).status
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .created }.count == 1)
                #expect(statuses.filter { $0 == .conflict }.count == 19)
                let count = try await harness.database.query("SELECT count(*) FROM proofs").decode(Int.self, row: 0, column: 0)
                #expect(count == 1)

                // And twenty concurrent repeats with one key: one proof, the rest replays or 409s.
                let second = try await harness.createDelivery(client)
                let body = Samples.proofJSON()
                let repeats = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Bool).self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let response = try await client.execute(uri: "/v1/deliveries/\(second)/proof", method: .post,
                                                                    headers: harness.headers(.courier, [.idempotencyKey: "same"]),
                                                                    body: ByteBuffer(string: body))
                            return (response.status, response.headers[.idempotentReplayed] == "true")
                        }
                    }
                    return try await group.reduce(into: [(HTTPResponse.Status, Bool)]()) { $0.append($1) }
                }
                #expect(repeats.filter { $0.0 == .created && !$0.1 }.count == 1)
                #expect(repeats.allSatisfy { $0.0 == .created || $0.0 == .conflict })
                let total = try await harness.database.query("SELECT count(*) FROM proofs").decode(Int.self, row: 0, column: 0)
                #expect(total == 2)
            }
        }
    }
}
