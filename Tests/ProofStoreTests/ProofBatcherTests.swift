import Cryptography
import Foundation
import Postgres
@testable import ProofStore
import Synchronization
import Testing
import TestSupport

/// Group commit of uploads (`ProofBatcher`), on the real database: proofs that queue while a
/// transaction runs are stored together, each with its own event; a refused batch is stored again
/// proof by proof, so every caller gets its own answer.
@Suite("Proof group commit", .needsDatabase)
struct ProofBatcherTests {
    static func proof(uploadedBy: UUID, signer: String) -> NewProof {
        NewProof.sample(uploadedBy: uploadedBy, signer: signer, body: Array("{\"signer\":\"\(signer)\"}".utf8), ink: Array(signer.utf8))
    }

    /// Holds the row locks `lockSQL` takes (as the owner; by default every audit chain's) until
    /// ``end()``, so a transaction needing them waits.
    final class LockHold: Sendable {
        private let release: AsyncStream<Void>.Continuation
        private let task: Task<Void, any Error>

        init(ownerURL: String, lockSQL: String = "SELECT chain FROM audit_chains FOR UPDATE") async throws {
            let (released, release) = AsyncStream<Void>.makeStream()
            let locked = Atomic<Bool>(false)
            self.release = release
            task = Task {
                try await PostgresClient.withClient(.forTests(url: ownerURL, poolSize: 1)) { owner in
                    try await owner.withTransaction { session in
                        _ = try await session.query(lockSQL)
                        locked.store(true, ordering: .sequentiallyConsistent)
                        for await _ in released { break }
                    }
                }
            }
            try await ProofBatcherTests.waitUntil { locked.load(ordering: .sequentiallyConsistent) }
        }

        func end() async throws {
            release.yield()
            release.finish()
            try await task.value
        }
    }

    static func waitUntil(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<1_000 where try await !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await condition())
    }

    static func count(_ sql: String, in database: PostgresClient) async throws -> Int {
        try await database.query(sql).decode(Int.self, row: 0, column: 0)
    }

    /// Records an issue unless `verify --database`'s check of the whole log passes.
    static func expectLogVerifies(_ database: PostgresClient, _ when: String) async throws {
        guard case .ok = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify() else {
            Issue.record("the audit log does not verify \(when)")
            return
        }
    }

    /// Creates deliveries `references` and a courier key; returns the key's id.
    static func prepare(_ references: [String], in database: PostgresClient) async throws -> UUID {
        let deliveries = DeliveryRepository(database: database, dataKeys: TestDataKeys.provider)
        for reference in references {
            _ = try await deliveries.create(NewDelivery(reference: reference, recipientName: "R", address: "A", destination: nil), by: nil)
        }
        return try await APIKeyRepository(database: database).create(name: "courier", role: .courier).key.id
    }

    @Test("proofs queued behind a transaction are stored in one, at most maxBatch at a time, each with its own event")
    func queuedProofsShareTransactions() async throws {
        try await ScratchDatabase.with(prefix: "batch_ok") { scratch, database in
            let references = (0..<11).map { "B-\($0)" }
            let key = try await Self.prepare(references, in: database)
            let repository = ProofRepository(database: database, dataKeys: TestDataKeys.provider, maxBatch: 4, maxInFlight: 1, lockWait: .seconds(30))
            let hold = try await LockHold(ownerURL: scratch.ownerURL)
            let proofs = references.map { ($0, Self.proof(uploadedBy: key, signer: "Signer \($0)")) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await repository.record(proofs[0].1, reference: proofs[0].0) }
                // The first takes the one place and waits for its chain; the other ten queue.
                try await Self.waitUntil { repository.batchStatistics.transactions == 1 }
                for (reference, proof) in proofs.dropFirst() {
                    group.addTask { try await repository.record(proof, reference: reference) }
                }
                try await Self.waitUntil { repository.batcher.queued == 10 }
                try await hold.end()
                try await group.waitForAll()
            }
            let counts = repository.batchStatistics
            #expect(counts == ProofBatchCounts(transactions: 4, alone: 1, together: 10, largest: 4, retried: 0),
                    "one alone, then 4 + 4 + 2 from the queue: \(counts)")
            // Every proof stored once, with exactly one proof_recorded event naming it, on an intact log.
            for (reference, proof) in proofs {
                #expect(try await repository.metadata(reference: reference)?.id == proof.id)
                #expect(try await Self.count("""
                    SELECT count(*) FROM audit_events WHERE action = 'proof_recorded' AND subject = 'delivery:\(reference)'
                      AND details_text LIKE '%\(proof.id.uuidString.lowercased())%'
                    """, in: database) == 1)
            }
            #expect(try await Self.count("SELECT count(*) FROM audit_events WHERE action = 'proof_recorded'", in: database) == 11)
            try await Self.expectLogVerifies(database, "after batched uploads")
        }
    }

    @Test("a batch with a refused proof rolls back and is stored proof by proof: only the refused one fails")
    func refusedBatchIsStoredOneByOne() async throws {
        try await ScratchDatabase.with(prefix: "batch_refused") { scratch, database in
            let references = (0..<6).map { "C-\($0)" }
            let key = try await Self.prepare(references, in: database)
            let repository = ProofRepository(database: database, dataKeys: TestDataKeys.provider, maxBatch: 32, maxInFlight: 1, lockWait: .seconds(30))
            let hold = try await LockHold(ownerURL: scratch.ownerURL)
            // C-3 twice (a retried upload with a new proof id), and one for a delivery that does not exist.
            var uploads = references.map { ($0, Self.proof(uploadedBy: key, signer: "S \($0)")) }
            uploads.append(("C-3", Self.proof(uploadedBy: key, signer: "S C-3 again")))
            uploads.append(("NOPE", Self.proof(uploadedBy: key, signer: "S nope")))
            let results = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for (index, (reference, proof)) in uploads.enumerated() {
                    group.addTask {
                        do {
                            try await repository.record(proof, reference: reference)
                            return (reference, "stored")
                        } catch ProofStoreError.proofAlreadyRecorded(let id) {
                            return (reference, id == proof.id ? "409" : "409 naming another proof")
                        } catch ProofStoreError.deliveryNotFound {
                            return (reference, "404")
                        }
                    }
                    if index == 0 { try await Self.waitUntil { repository.batchStatistics.transactions == 1 } }
                }
                try await Self.waitUntil { repository.batcher.queued == uploads.count - 1 }
                try await hold.end()
                var results: [String: [String]] = [:]
                for try await (reference, outcome) in group { results[reference, default: []].append(outcome) }
                return results.mapValues { $0.sorted() }
            }
            #expect(results["C-3"] == ["409", "stored"])
            #expect(results["NOPE"] == ["404"])
            for reference in references where reference != "C-3" { #expect(results[reference] == ["stored"], "\(reference)") }
            let counts = repository.batchStatistics
            #expect(counts.retried == uploads.count - 1 && counts.together == 0, "\(counts)")
            #expect(try await Self.count("SELECT count(*) FROM proofs", in: database) == references.count)
            #expect(try await Self.count("SELECT count(*) FROM audit_events WHERE action = 'proof_recorded'", in: database)
                    == references.count)
            try await Self.expectLogVerifies(database, "after a refused batch")
        }
    }

    @Test("an upload waiting for a lock held elsewhere gives up its place after lockWait and waits alone; the others go on")
    func lockedDeliveryDoesNotStallOthers() async throws {
        try await ScratchDatabase.with(prefix: "batch_lock") { scratch, database in
            let key = try await Self.prepare(["L-X", "L-Y", "L-Z"], in: database)
            let repository = ProofRepository(database: database, dataKeys: TestDataKeys.provider, maxBatch: 32, maxInFlight: 1, lockWait: .milliseconds(200))
            let hold = try await LockHold(ownerURL: scratch.ownerURL, lockSQL: "SELECT id FROM deliveries WHERE reference = 'L-X' FOR UPDATE")
            let stuck = Self.proof(uploadedBy: key, signer: "X")
            let waiting = Task { try await repository.record(stuck, reference: "L-X") }
            // Its first transaction gives up on the lock; it is then stored again outside the batcher.
            try await Self.waitUntil { repository.batchStatistics.retried == 1 }
            guard repository.batchStatistics.retried == 1 else {
                // Release the lock so the stuck upload (and this test) can end.
                try await hold.end()
                _ = try? await waiting.value
                return
            }
            for reference in ["L-Y", "L-Z"] {
                try await repository.record(Self.proof(uploadedBy: key, signer: reference), reference: reference)
                #expect(try await repository.metadata(reference: reference) != nil)
            }
            #expect(try await repository.metadata(reference: "L-X") == nil, "still waiting for the held lock")
            try await hold.end()
            try await waiting.value
            #expect(try await repository.metadata(reference: "L-X")?.id == stuck.id)
            #expect(try await Self.count("SELECT count(*) FROM audit_events WHERE action = 'proof_recorded'", in: database) == 3)
        }
    }

    @Test("only errors after which nothing can have been committed are retried proof by proof")
    func retriedErrors() {
        #expect(ProofBatcher.rolledBack(ProofStoreError.deliveryNotFound))
        #expect(ProofBatcher.rolledBack(PostgresError(.deadlockDetected, message: "deadlock", sqlState: "40P01")))
        #expect(ProofBatcher.rolledBack(PostgresError(.uniqueViolation, message: "dup", sqlState: "23505", constraint: "proofs_pkey")))
        #expect(!ProofBatcher.rolledBack(PostgresError(.connectionLost, message: "server closed the connection")))
        #expect(!ProofBatcher.rolledBack(PostgresError(.serverUnavailable, message: "shutting down", sqlState: "57P01")))
        #expect(!ProofBatcher.rolledBack(PostgresError(.poolTimeout, message: "no connection")))
        #expect(!ProofBatcher.rolledBack(CancellationError()))
        #expect(ProofBatcher.waitedTooLong(PostgresError(.queryFailed, message: "canceling statement due to lock timeout", sqlState: "55P03")))
        #expect(!ProofBatcher.waitedTooLong(PostgresError(.queryCanceled, message: "statement timeout", sqlState: "57014")))
    }
}
