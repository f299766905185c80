import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport

@Suite("Audit log", .needsDatabase)
struct AuditTests {
    static func verify(_ client: some TestClientProtocol, _ harness: APITestHarness) async throws -> [String: Any] {
        let response = try await client.execute(uri: "/v1/audit/verify", method: .get, headers: harness.headers(.auditor))
        #expect(response.status == .ok)
        return response.json
    }

    /// Creates a delivery and uploads a proof; returns the reference and the proof id.
    static func deliver(_ client: some TestClientProtocol, _ harness: APITestHarness, signer: String = "Ada") async throws -> (String, String) {
        let reference = try await harness.createDelivery(client)
        let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: harness.headers(.courier),
                                              body: ByteBuffer(string: Samples.proofJSON(signer: signer)))
        #expect(upload.status == .created)
        return (reference, try #require(upload.json["proof_id"] as? String))
    }

    /// Every chain's head as `audit_chains` holds it, in the JSON form verification answers with.
    static func chainHeads(_ database: PostgresClient) async throws -> [[String: String]] {
        try await database.query("SELECT chain, head_seq, head_hash FROM audit_chains ORDER BY chain").rows.map {
            ["chain": String(try $0.decode(Int.self, 0)), "head_seq": String(try $0.decode(Int64.self, 1)),
             "head_hash": try $0.decode([UInt8].self, 2).hexString]
        }
    }

    /// `chains` of a verification or checkpoint answer, as strings for comparison.
    static func chains(_ json: [String: Any]) -> [[String: String]] {
        (json["chains"] as? [[String: Any]] ?? []).map { head in
            ["chain": String(head["chain"] as? Int ?? -1), "head_seq": String(head["head_seq"] as? Int ?? -1),
             "head_hash": head["head_hash"] as? String ?? ""]
        }
    }

    /// Through `.router`, so that the 50 writers run concurrently in the server: the `.live` client sends every request down one
    /// keep-alive connection, where the server answers them one after another, and the last of that queue timed out on a
    /// loaded CI machine.
    @Test("the chains verify after a mixed workload of 50 concurrent writers, with no fork")
    func concurrentWriters() async throws {
        try await APITestHarness.with(poolSize: 8) { harness in
            try await harness.application().test(.router) { client in
                let keys = APIKeyRepository(database: harness.database)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<50 {
                        group.addTask {
                            switch index % 3 {
                            case 0:
                                let (reference, _) = try await Self.deliver(client, harness, signer: "Signer \(index)")
                                let png = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                                   headers: harness.headers(.dispatcher))
                                #expect(png.status == .ok)
                            case 1:
                                let (key, _) = try await keys.create(name: "worker \(index)", role: .courier)
                                #expect(try await keys.revoke(id: key.id))
                            default:
                                try await harness.createDelivery(client)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // 4 harness keys + 17 x (delivery, proof, PNG read) + 17 x (key created, revoked) + 16 deliveries.
                let expected = 4 + 17 * 3 + 17 * 2 + 16
                let stats = try await harness.database.query("""
                    SELECT count(*), count(DISTINCT seq), count(DISTINCT (chain, prev_hash)), count(DISTINCT chain) FROM audit_events
                    """)
                #expect(try stats.decode(Int.self, row: 0, column: 0) == expected)
                #expect(try stats.decode(Int.self, row: 0, column: 1) == expected)
                #expect(try stats.decode(Int.self, row: 0, column: 2) == expected, "every event has its own predecessor in its chain: no fork")
                #expect(try stats.decode(Int.self, row: 0, column: 3) > 1, "the workload spread over several chains")
                let result = try await Self.verify(client, harness)
                #expect(result["status"] as? String == "ok")
                #expect(result["count"] as? Int == expected)
                #expect(Self.chains(result) == (try await Self.chainHeads(harness.database)))
                let kinds = try await harness.database.query("SELECT action, count(*) FROM audit_events GROUP BY action ORDER BY action")
                let counts = Dictionary(uniqueKeysWithValues: try kinds.rows.map { (try $0.decode(String.self, 0), try $0.decode(Int.self, 1)) })
                #expect(counts == ["delivery_created": 33, "proof_recorded": 17, "proof_png_read": 17, "key_created": 21, "key_revoked": 17])
            }
        }
    }

    @Test("as the superuser, one changed byte of a stored PNG or body is found and the proof named")
    func tamperedProof() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (_, first) = try await Self.deliver(client, harness, signer: "First")
                let (secondReference, second) = try await Self.deliver(client, harness, signer: "Second")
                #expect(try await Self.verify(client, harness)["status"] as? String == "ok")
                let recorded = try await harness.database.query(
                    "SELECT seq FROM audit_events WHERE action = 'proof_recorded' ORDER BY seq")
                let firstSeq = try recorded.decode(Int.self, row: 0, column: 0), secondSeq = try recorded.decode(Int.self, row: 1, column: 0)

                try await harness.scratch.asSuperuser { admin in try await Self.tamperProofs(admin, first: first, second: second, client, harness,
                                                                                           firstSeq: firstSeq, secondSeq: secondSeq, secondReference: secondReference) }
            }
        }
    }

    static func tamperProofs(_ admin: PostgresClient, first: String, second: String, _ client: some TestClientProtocol, _ harness: APITestHarness,
                             firstSeq: Int, secondSeq: Int, secondReference: String) async throws {
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE proofs DISABLE TRIGGER USER")
            try await session.execute("UPDATE proofs SET png = set_byte(png, 60, get_byte(png, 60) # 1) WHERE id = $1::uuid", [second])
            try await session.execute("ALTER TABLE proofs ENABLE TRIGGER USER")
        }
        var result = try await Self.verify(client, harness)
        #expect(result["status"] as? String == "broken")
        #expect(result["kind"] as? String == "proof_png_mismatch")
        #expect(result["seq"] as? Int == secondSeq)
        #expect(result["proof_id"] as? String == second)
        #expect(result["subject"] as? String == "delivery:\(secondReference)")
        #expect((result["expected"] as? String) != (result["found"] as? String))

        // An earlier proof's original body: the break reported is the first one in the chain.
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE proofs DISABLE TRIGGER USER")
            try await session.execute("UPDATE proofs SET body = set_byte(body, 5, get_byte(body, 5) # 1) WHERE id = $1::uuid", [first])
            try await session.execute("ALTER TABLE proofs ENABLE TRIGGER USER")
        }
        result = try await Self.verify(client, harness)
        #expect(result["kind"] as? String == "proof_body_mismatch")
        #expect(result["seq"] as? Int == firstSeq)
        #expect(result["proof_id"] as? String == first)
    }

    @Test("as the superuser, an edited or deleted audit row is found and its sequence named")
    func tamperedChain() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                for _ in 0..<3 { try await harness.createDelivery(client) }
                #expect(try await Self.verify(client, harness)["count"] as? Int == 7)
                try await harness.scratch.asSuperuser { admin in try await Self.tamperChain(admin, client, harness) }
            }
        }
    }

    static func tamperChain(_ admin: PostgresClient, _ client: some TestClientProtocol, _ harness: APITestHarness) async throws {
        let original = try await admin.query("SELECT subject FROM audit_events WHERE seq = 5").decode(String.self, row: 0, column: 0)
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
            try await session.execute("UPDATE audit_events SET subject = 'delivery:someone-else' WHERE seq = 5")
            try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
        }
        var result = try await Self.verify(client, harness)
        #expect(result["status"] as? String == "broken")
        #expect(result["kind"] as? String == "hash_mismatch")
        #expect(result["seq"] as? Int == 5)

        // Rewriting the hash too moves the break to the next event of its chain (prev_hash), or,
        // when it was the chain's newest, to the head audit_chains recorded.
        let edited = try await AuditLog(database: harness.database).events(AuditQuery(limit: 1, afterSeq: 4)).events[0]
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
            try await session.execute("UPDATE audit_events SET hash = $1 WHERE seq = 5", [PostgresBytes(edited.recomputedHash)])
            try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
        }
        result = try await Self.verify(client, harness)
        try await Self.expectBreakAfter(5, result, admin)

        // Put it back, then delete a row.
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
            try await session.execute("UPDATE audit_events SET subject = $1, hash = $2 WHERE seq = 5",
                                      [original, PostgresBytes(Self.hashOf(subject: original, edited: edited))])
            try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
        }
        #expect(try await Self.verify(client, harness)["status"] as? String == "ok")
        // Deleting an event breaks its chain the same way.
        let chainOf3 = try await admin.query("SELECT chain FROM audit_events WHERE seq = 3").decode(Int.self, row: 0, column: 0)
        let nextOf3 = try await Self.nextInChain(3, admin)
        try await admin.withConnection { session in
            try await session.execute("ALTER TABLE audit_events DISABLE TRIGGER USER")
            try await session.execute("DELETE FROM audit_events WHERE seq = 3")
            try await session.execute("ALTER TABLE audit_events ENABLE TRIGGER USER")
        }
        result = try await Self.verify(client, harness)
        #expect(result["chain"] as? Int == chainOf3)
        if let nextOf3 {
            #expect(result["kind"] as? String == "prev_mismatch")
            #expect(result["seq"] as? Int == Int(nextOf3))
        } else {
            #expect(result["kind"] as? String == "head_mismatch")
            #expect((result["found"] as? String)?.hasPrefix("3 ") == true, "audit_chains still names event 3")
        }
    }

    /// The seq of the event after `seq` on its chain, if any.
    static func nextInChain(_ seq: Int64, _ admin: PostgresClient) async throws -> Int64? {
        try await admin.query("""
            SELECT min(n.seq) FROM audit_events e LEFT JOIN audit_events n ON n.chain = e.chain AND n.seq > e.seq WHERE e.seq = $1
            """, [seq]).decode(Int64?.self, row: 0, column: 0)
    }

    /// A rewritten event `seq` (valid hash of changed content) breaks at its chain's next event, or at the recorded head.
    static func expectBreakAfter(_ seq: Int64, _ result: [String: Any], _ admin: PostgresClient,
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        if let next = try await nextInChain(seq, admin) {
            #expect(result["kind"] as? String == "prev_mismatch", sourceLocation: sourceLocation)
            #expect(result["seq"] as? Int == Int(next), sourceLocation: sourceLocation)
        } else {
            #expect(result["kind"] as? String == "head_mismatch", sourceLocation: sourceLocation)
            #expect(result["seq"] as? Int == Int(seq), sourceLocation: sourceLocation)
        }
    }

    static func hashOf(subject: String, edited: AuditEvent) -> [UInt8] {
        var event = edited
        event.subject = subject
        return event.recomputedHash
    }

    @Test("retention: proofs of an archived period, once dropped, verify as archived; a proof missing outside it is still named")
    func archivedProofs() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let (first, firstProof) = try await Self.deliver(client, harness, signer: "First")
                let (second, _) = try await Self.deliver(client, harness, signer: "Second")
                try await Task.sleep(for: .milliseconds(50))  // so a period can end between the second and third proof
                let (third, thirdProof) = try await Self.deliver(client, harness, signer: "Third")
                func deliveredAt(_ reference: String) async throws -> Date {
                    try await harness.database.query("SELECT delivered_at FROM deliveries WHERE reference = $1", [reference])
                        .decode(Date.self, row: 0, column: 0)
                }
                // The period holds the first two proofs; the third was received after it ends.
                let since = try await deliveredAt(first).addingTimeInterval(-60)
                let until = try await deliveredAt(second).addingTimeInterval(0.02)
                #expect(try await deliveredAt(third) > until)
                let (sinceText, untilText) = (RFC3339Timestamp.format(since), RFC3339Timestamp.format(until))
                _ = try await harness.database.withTransaction { session in
                    try await AuditLog.append(.proofsArchived, subject: "archive:\(sinceText)/\(untilText)",
                                              details: ["since": sinceText, "until": untilText, "bundle_sha256": String(repeating: "ab", count: 32),
                                                        "proof_count": "2"], origin: .cli, in: session)
                }
                var result = try await Self.verify(client, harness)
                #expect(result["status"] as? String == "ok" && result["archived_proofs"] as? Int == 0, "nothing dropped yet: \(result)")

                // The retention procedure drops the archived proofs (here: their rows, as the table owner would drop a month).
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE proofs DISABLE TRIGGER USER")
                        try await session.execute("""
                            DELETE FROM proofs WHERE delivery_id IN (SELECT id FROM deliveries WHERE reference IN ($1, $2))
                            """, [first, second])
                        try await session.execute("ALTER TABLE proofs ENABLE TRIGGER USER")
                    }
                }
                result = try await Self.verify(client, harness)
                #expect(result["status"] as? String == "ok", "\(result)")
                #expect(result["archived_proofs"] as? Int == 2)
                #expect(firstProof != thirdProof)

                // A proof received outside every archived period is still reported missing.
                try await harness.scratch.asSuperuser { admin in
                    try await admin.withConnection { session in
                        try await session.execute("ALTER TABLE proofs DISABLE TRIGGER USER")
                        try await session.execute("DELETE FROM proofs WHERE id = $1::uuid", [thirdProof])
                        try await session.execute("ALTER TABLE proofs ENABLE TRIGGER USER")
                    }
                }
                result = try await Self.verify(client, harness)
                #expect(result["kind"] as? String == "proof_missing")
                #expect(result["proof_id"] as? String == thirdProof)
                #expect(result["subject"] as? String == "delivery:\(third)")
            }
        }
    }

    @Test("the service role cannot UPDATE, DELETE or TRUNCATE audit events")
    func appendOnly() async throws {
        try await APITestHarness.with { harness in
            let database = harness.database
            let before = try await database.query("SELECT count(*) FROM audit_events").decode(Int.self, row: 0, column: 0)
            #expect(before == 4)
            await #expect(throws: PostgresError.self) { try await database.query("UPDATE audit_events SET subject = 'x' WHERE seq = 1") }
            await #expect(throws: PostgresError.self) { try await database.query("DELETE FROM audit_events WHERE seq = 4") }
            await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE audit_events") }
            // Every partition refuses TRUNCATE on its own too (the parent's trigger does not fire for it).
            let partitions = try await database.query("""
                SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'audit_events'::regclass
                """).rows.map { try $0.decode(String.self, 0) }
            #expect(partitions.contains("audit_events_default") && partitions.count >= 5)
            for partition in partitions {
                await #expect(throws: PostgresError.self, "\(partition)") { try await database.query("TRUNCATE \(unescaped: partition)") }
            }
            // Chain heads only move forward, and no chain can be removed.
            await #expect(throws: PostgresError.self) { try await database.query("UPDATE audit_chains SET head_seq = 0") }
            await #expect(throws: PostgresError.self) { try await database.query("DELETE FROM audit_chains WHERE chain = 15") }
            await #expect(throws: PostgresError.self) { try await database.query("TRUNCATE audit_chains") }
            let after = try await database.query("SELECT count(*) FROM audit_events").decode(Int.self, row: 0, column: 0)
            #expect(after == 4)
            let heads = try await database.withConnection { session in try await AuditCheckpointStore.heads(in: session) }
            #expect(heads.count == 16 && heads.map(\.seq).max() == 4)
            let verification = try await AuditVerifier(database: database, dataKeys: TestDataKeys.provider).verify()
            #expect(verification == .ok(count: 4, heads: heads))
        }
    }

    @Test("events: auditor and admin only; filters by action, subject, actor and time; keyset paging; reads are recorded")
    func eventsEndpoint() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                for role: Role? in [nil, .courier, .dispatcher] {
                    for path in ["/v1/audit/events", "/v1/audit/verify"] {
                        let response = try await client.execute(uri: path, method: .get, headers: harness.headers(role))
                        #expect(response.status == (role == nil ? .unauthorized : .forbidden), "\(path) as \(role?.rawValue ?? "nobody")")
                        #expect(response.headers[.contentType] == Problem.contentType)
                    }
                }
                let references = [try await harness.createDelivery(client), try await harness.createDelivery(client)]
                let (proofReference, _) = try await Self.deliver(client, harness)
                let png = try await client.execute(uri: "/v1/deliveries/\(proofReference)/proof/signature.png", method: .get,
                                                   headers: harness.headers(.auditor, [.userAgent: "audit-test/1"]))
                #expect(png.status == .ok)

                let all = try await client.execute(uri: "/v1/audit/events", method: .get, headers: harness.headers(.admin))
                #expect(all.status == .ok)
                let items = try #require(all.json["items"] as? [[String: Any]])
                #expect(items.map { $0["seq"] as? Int } == Array(1...9).map { Optional($0) })
                #expect(items.prefix(4).allSatisfy { $0["action"] as? String == "key_created" && ($0["actor"] as? [String: Any])?["role"] as? String == "cli" })

                let created = try await client.execute(uri: "/v1/audit/events?action=delivery_created", method: .get, headers: harness.headers(.auditor))
                #expect((created.json["items"] as? [[String: Any]])?.count == 3)
                let dispatcher = harness.actors[.dispatcher]!.keyID.uuidString.lowercased()
                let byActor = try await client.execute(uri: "/v1/audit/events?actor=\(dispatcher)", method: .get, headers: harness.headers(.auditor))
                #expect((byActor.json["items"] as? [[String: Any]])?.count == 3)
                let subject = try await client.execute(uri: "/v1/audit/events?subject=delivery:\(references[1])", method: .get,
                                                       headers: harness.headers(.auditor))
                let subjectItems = try #require(subject.json["items"] as? [[String: Any]])
                #expect(subjectItems.count == 1)
                #expect(subjectItems.first?["request_id"] as? String != nil)

                let reads = try await client.execute(uri: "/v1/audit/events?action=proof_png_read", method: .get, headers: harness.headers(.auditor))
                let read = try #require((reads.json["items"] as? [[String: Any]])?.first)
                #expect(read["user_agent"] as? String == "audit-test/1")
                #expect(read["encoding"] as? String == "countersign.audit/v2")
                #expect(read["chain"] as? Int == Int(AuditLog.chain(for: "delivery:\(proofReference)")))
                #expect((read["actor"] as? [String: Any])?["key_id"] as? String == harness.actors[.auditor]!.keyID.uuidString.lowercased())
                let recorded = try await client.execute(uri: "/v1/audit/events?action=proof_recorded", method: .get, headers: harness.headers(.auditor))
                let details = try #require((recorded.json["items"] as? [[String: Any]])?.first?["details"] as? [String: String])
                #expect(details["png_sha256"] == SHA256.hash(png.bytes).hexString)
                #expect(details["points_sha256"]?.count == 64)

                let future = try await client.execute(uri: "/v1/audit/events?since=2999-01-01T00:00:00Z", method: .get, headers: harness.headers(.auditor))
                #expect((future.json["items"] as? [[String: Any]])?.isEmpty == true)
                let past = try await client.execute(uri: "/v1/audit/events?until=2999-01-01T00:00:00Z&since=2000-01-01T00:00:00Z", method: .get,
                                                    headers: harness.headers(.auditor))
                #expect((past.json["items"] as? [[String: Any]])?.count == 9)

                var seqs: [Int] = []
                var uri: String? = "/v1/audit/events?limit=4"
                while let next = uri {
                    let page = try await client.execute(uri: next, method: .get, headers: harness.headers(.auditor))
                    #expect(page.status == .ok)
                    seqs += (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
                    uri = page.json["next"] as? String
                    #expect(seqs.count <= 9)
                }
                #expect(seqs == Array(1...9))

                for bad in ["action=deleted", "actor=nobody", "limit=0", "cursor=zzz", "since=yesterday"] {
                    let response = try await client.execute(uri: "/v1/audit/events?\(bad)", method: .get, headers: harness.headers(.auditor))
                    #expect(response.status == .unprocessableContent, "\(bad)")
                    #expect(response.problemCode == "validation_failed")
                }
            }
        }
    }
}
