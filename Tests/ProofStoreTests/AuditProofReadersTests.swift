import Foundation
import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// `verify --database` reads proofs on several connections at once, each in the walk's exported
/// snapshot (`AuditVerifier.proofReaders`): every proof is still re-hashed, whichever connection
/// read it, and a changed one is named as with a single reader.
@Suite("Audit verification: proofs read on several connections", .needsDatabase)
struct AuditProofReadersTests {
    @Test("three readers in one snapshot verify twelve proofs, and find the one changed PNG a helper read")
    func readersShareTheWalk() async throws {
        try await ScratchDatabase.with(prefix: "verify_readers", poolSize: 3) { scratch, database in
            let references = (0..<12).map { "R-\($0)" }
            let key = try await ProofBatcherTests.prepare(references, in: database)
            let repository = ProofRepository(database: database, dataKeys: TestDataKeys.provider)
            var ids: [UUID] = []
            for reference in references {
                let proof = ProofBatcherTests.proof(uploadedBy: key, signer: "Signer \(reference)")
                try await repository.record(proof, reference: reference)
                ids.append(proof.id)
            }
            // Batches of two: six batches, two for each reader; the walk's own session reads
            // batches 0 and 3, the helpers 1 and 4, 2 and 5.
            let readers = AuditVerifier(database: database, dataKeys: TestDataKeys.provider, proofBatchSize: 2, proofReaders: 3)
            guard case .ok(let count, _, _) = try await readers.verify() else {
                Issue.record("not ok before tampering")
                return
            }
            #expect(count == 12 + 12 + 1, "a delivery_created and a proof_recorded event per proof, and the key's")
            // Proof 8 is in batch 4: a helper connection reads it.
            let changed = ids[8]
            try await scratch.asSuperuser { admin in
                try await admin.withConnection { session in
                    try await session.execute("ALTER TABLE proofs DISABLE TRIGGER USER")
                    try await session.execute("UPDATE proofs SET png = set_byte(png, 7, get_byte(png, 7) # 1) WHERE id = \(changed)")
                    try await session.execute("ALTER TABLE proofs ENABLE TRIGGER USER")
                }
            }
            for verifier in [readers, AuditVerifier(database: database, dataKeys: TestDataKeys.provider, proofBatchSize: 2)] {
                guard case .broken(let failure) = try await verifier.verify() else {
                    Issue.record("the changed PNG was not found with \(verifier.proofReaders) readers")
                    continue
                }
                #expect(failure.kind == .proofPNGMismatch && failure.proofID == changed.uuidString.lowercased(), "\(failure)")
            }
            // The helpers' transactions ended with the walk: nothing is left open on the pool.
            let open = try await database.query("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND state LIKE 'idle in transaction%'
                """).decode(Int.self, row: 0, column: 0)
            #expect(open == 0)
        }
    }
}
