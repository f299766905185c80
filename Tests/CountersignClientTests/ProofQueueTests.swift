import CountersignClient
import Foundation
import Testing

@Suite("ProofQueue: durable, removed only on a definitive answer (scripted transport)")
struct ProofQueueTests {
    func client(_ transport: ScriptedTransport, attempts: Int = 2) -> CourierClient {
        CourierClient(baseURL: URL(string: "http://127.0.0.1:1")!, token: "t", transport: transport,
                      retryPolicy: RetryPolicy(maxAttempts: attempts), sleep: { _ in })
    }

    @Test("an enqueued proof is on disk, whole, with its Idempotency-Key, for a queue opened afresh (a new process)")
    func survivesReopen() async throws {
        try await Samples.withFolder { folder in
            let proof = try PreparedProof(try Samples.submission())
            let item = try await ProofQueue(folder: folder).enqueue(proof)
            let reopened = try await ProofQueue(folder: folder).pending()
            #expect(reopened == [item])
            #expect(reopened.first?.proof.idempotencyKey == proof.idempotencyKey && reopened.first?.proof.body == proof.body)
            let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/pending")
            #expect(names == [item.fileName])
        }
    }

    @Test("proofs queued within one millisecond, and by a queue opened afresh in the same one, keep the order queued")
    func sameMillisecondKeepsOrder() async throws {
        try await Samples.withFolder { folder in
            // One clock reading for every item: only the queue's own ordering can keep them apart.
            let now = Date(timeIntervalSince1970: 1_764_000_000.123)
            let queue = try ProofQueue(folder: folder)
            var queued: [String] = []
            for n in 1...20 {
                let proof = try PreparedProof(try Samples.submission(reference: "MS-\(n)"))
                queued.append(try await queue.enqueue(proof, now: now).proof.idempotencyKey)
            }
            let later = try PreparedProof(try Samples.submission(reference: "MS-21"))
            queued.append(try await ProofQueue(folder: folder).enqueue(later, now: now).proof.idempotencyKey)
            #expect(try await ProofQueue(folder: folder).pending().map(\.proof.idempotencyKey) == queued)
        }
    }

    @Test("a torn write (a temporary file left by a crash mid-write) is never read as an item, and is cleaned up")
    func tornWriteIgnored() async throws {
        try await Samples.withFolder { folder in
            let queue = try ProofQueue(folder: folder)
            let item = try await queue.enqueue(try PreparedProof(try Samples.submission()))
            let torn = folder + "/pending/000000000000001-torn.json.123.tmp"
            _ = FileManager.default.createFile(atPath: torn, contents: Data(#"{"version":1,"proof":{"refer"#.utf8))
            #expect(try await queue.pending() == [item])
            #expect(!FileManager.default.fileExists(atPath: torn))
        }
    }

    @Test("items go oldest first; a success removes, a definitive refusal moves to rejected/ with its problem, no answer keeps the rest")
    func drainOutcomes() async throws {
        try await Samples.withFolder { folder in
            let queue = try ProofQueue(folder: folder)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            var items: [QueuedProof] = []
            for (index, reference) in ["A-1", "A-2", "A-3", "A-4"].enumerated() {
                items.append(try await queue.enqueue(try PreparedProof(try Samples.submission(reference: reference)),
                                                     now: start.addingTimeInterval(Double(index))))
            }
            let transport = ScriptedTransport([ScriptedTransport.created(reference: "A-1"),
                                               ScriptedTransport.problem(409, "proof_already_recorded"),
                                               .noAnswer, .noAnswer])
            let report = try await queue.drain(with: client(transport))
            #expect(transport.requests.map(\.url.path) == ["/v1/deliveries/A-1/proof", "/v1/deliveries/A-2/proof",
                                                           "/v1/deliveries/A-3/proof", "/v1/deliveries/A-3/proof"])
            #expect(report.sent.map(\.reference) == ["A-1"])
            #expect(report.rejected.map(\.problem.code) == ["proof_already_recorded"])
            #expect(report.remaining == 2)
            guard case .transport = report.stoppedBy else { Issue.record("stopped by \(String(describing: report.stoppedBy))"); return }
            #expect(try await queue.pending().map(\.proof.reference) == ["A-3", "A-4"])
            #expect(try await queue.rejected() == [items[1].fileName])
            let problem = try String(contentsOfFile: folder + "/rejected/" + items[1].fileName.replacingOccurrences(of: ".json", with: ".problem.json"), encoding: .utf8)
            #expect(problem.contains("proof_already_recorded"))
        }
    }

    @Test("killed between the server's answer and the removal: the next drain resends the same bytes and key, and the item goes")
    func crashBetweenSendAndDelete() async throws {
        try await Samples.withFolder { folder in
            let item = try await ProofQueue(folder: folder).enqueue(try PreparedProof(try Samples.submission()))
            // The first process: the server stores the proof, then the process dies before removing the file.
            let first = ScriptedTransport([ScriptedTransport.created()])
            _ = try await client(first).upload(item.proof)
            // The next process: same queue folder, the server replays.
            let second = ScriptedTransport([ScriptedTransport.created(replayed: true)])
            let report = try await ProofQueue(folder: folder).drain(with: client(second))
            #expect(report.sent.map(\.replayed) == [true])
            #expect(first.requests.first?.body == second.requests.first?.body)
            #expect(first.requests.first?.headers["Idempotency-Key"] == second.requests.first?.headers["Idempotency-Key"])
            #expect(try await ProofQueue(folder: folder).pending().isEmpty)
        }
    }

    @Test("a revoked key (401) or a wrong role (403) rejects nothing: every proof waits for a valid key")
    func keyProblemsKeepTheQueue() async throws {
        try await Samples.withFolder { folder in
            let queue = try ProofQueue(folder: folder)
            try await queue.enqueue(try PreparedProof(try Samples.submission(reference: "K-1")))
            try await queue.enqueue(try PreparedProof(try Samples.submission(reference: "K-2")))
            for status in [401, 403] {
                let transport = ScriptedTransport([ScriptedTransport.problem(status, status == 401 ? "unauthorized" : "forbidden")])
                let report = try await queue.drain(with: client(transport))
                #expect(report.rejected.isEmpty && report.remaining == 2 && transport.requests.count == 1)
            }
            #expect(try await queue.pending().count == 2)
            #expect(try await queue.rejected().isEmpty)
        }
    }

    @Test("one drain at a time per folder, across processes (flock)")
    func oneDrainAtATime() async throws {
        try await Samples.withFolder { folder in
            let queue = try ProofQueue(folder: folder)
            try await queue.enqueue(try PreparedProof(try Samples.submission()))
            let other = open(folder + "/drain.lock", O_RDWR | O_CREAT, 0o600)
            #expect(flock(other, LOCK_EX | LOCK_NB) == 0)
            let transport = ScriptedTransport([ScriptedTransport.created()])
            #expect(try await queue.drain(with: client(transport)).busy)
            #expect(transport.requests.isEmpty)
            close(other)
            #expect(try await queue.drain(with: client(transport)).sent.count == 1)
        }
    }

    @Test("an Idempotency-Key the server would refuse is refused before it is queued")
    func badKeyRefused() async throws {
        try await Samples.withFolder { folder in
            var proof = try PreparedProof(try Samples.submission())
            for key in ["", "has space", String(repeating: "k", count: 256), "naïve"] {
                proof.idempotencyKey = key
                await #expect(throws: CountersignClientError.self) { try await ProofQueue(folder: folder).enqueue(proof) }
            }
            #expect(try await ProofQueue(folder: folder).pending().isEmpty)
        }
    }
}
