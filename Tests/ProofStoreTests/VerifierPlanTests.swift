import Postgres
@testable import ProofStore
import Testing
import TestSupport

/// `verify --database` asks whether any proof lacks its event with an anti-join under `LIMIT 1`.
/// PostgreSQL plans that as a nested loop comparing every proof with every event whenever it
/// expects an early match, which a sound database never has: 36,906 proofs took 204 s. The
/// verifier turns nested loops off for that query; these tests read the plans it gets.
@Suite("Verifier plans", .needsDatabase)
struct VerifierPlanTests {
    static func plan(of query: PostgresQuery, in session: PostgresSession) async throws -> String {
        var explain: PostgresQuery = "EXPLAIN "
        explain.append(query)
        return try await session.query(explain).rows.map { try $0.decode(String.self, 0) }.joined(separator: "\n")
    }

    static func setting(_ name: String, in session: PostgresSession) async throws -> String {
        try await session.query("SELECT current_setting(\(name)) AS value").first!.decode(String.self, "value")
    }

    @Test("the proof/event anti-join is a nested loop left to the planner, and a hash or merge anti-join as the verifier runs it")
    func proofAntiJoinAvoidsNestedLoops() async throws {
        try await ScratchDatabase.with(prefix: "verifier_plan") { _, client in
            // Fresh tables: no statistics yet, as just after a busy day's inserts.
            let query = AuditVerifier.proofWithoutEvent(receivedFrom: AuditTimestamp(micros: 0), afterSeq: 0)
            try await client.withTransaction(isolation: "REPEATABLE READ, READ ONLY") { session in
                let planner = try await Self.plan(of: query, in: session)
                #expect(planner.contains("Nested Loop Anti Join"), "the planner's own choice (the case this guards): \(planner)")
                let (verifier, mode) = try await AuditVerifier.withAntiJoinPlans(in: session) {
                    (try await Self.plan(of: query, in: session), try await Self.setting("plan_cache_mode", in: session))
                }
                #expect(!verifier.contains("Nested Loop"), "\(verifier)")
                #expect(verifier.contains("Anti Join"), "\(verifier)")
                // Joined to its delivery, the anti-join read every delivery of every year, even for an
                // incremental run's last hour; the reference is looked up only for a row it finds.
                #expect(!verifier.contains("deliveries"), "\(verifier)")
                // A generic plan scans every proof and event whatever the bounds: plans are made per run.
                #expect(mode == "force_custom_plan")
                let after = try await Self.plan(of: query, in: session)
                #expect(after.contains("Nested Loop"), "nested loops are back on for the rest of the transaction: \(after)")
                #expect(try await Self.setting("plan_cache_mode", in: session) == "auto")
            }
        }
    }
}
