import Foundation
import Postgres
import Testing

@Suite("Queries with interpolated values")
struct PostgresQueryTests {
    @Test("each value becomes the next placeholder; constants and nested queries go in as text")
    func placeholders() {
        let reference = "REF-1'; DROP TABLE deliveries; --"
        let limit = 10
        let query: PostgresQuery = "SELECT id FROM deliveries d WHERE d.reference = \(reference)::text AND \(unescaped: "true") LIMIT \(limit)"
        #expect(query.sql == "SELECT id FROM deliveries d WHERE d.reference = $1::text AND true LIMIT $2")
        #expect(query.binds.count == 2)
        #expect(query.binds[0] as? String == reference)
        #expect(query.binds[1] as? Int == limit)

        let conditions: [PostgresQuery] = ["a = \(1)", "b = \(2)", "c IS NOT NULL"]
        let nested: PostgresQuery = "SELECT \(0) WHERE \(conditions.joined(separator: " AND ")) LIMIT \(3)"
        #expect(nested.sql == "SELECT $1 WHERE a = $2 AND b = $3 AND c IS NOT NULL LIMIT $4")
        #expect(nested.binds.compactMap { $0 as? Int } == [0, 1, 2, 3])

        // Two-digit placeholders of a nested query are renumbered whole.
        let many = (1...12).map { number -> PostgresQuery in "c\(unescaped: String(number)) = \(number)" }.joined(separator: " AND ")
        let renumbered: PostgresQuery = "SELECT \(0), \(1), \(2) WHERE \(many) AND z = \(99)"
        #expect(renumbered.sql == "SELECT $1, $2, $3 WHERE " + (1...12).map { "c\($0) = $\($0 + 3)" }.joined(separator: " AND ") + " AND z = $16")
        #expect(renumbered.binds.compactMap { $0 as? Int } == [0, 1, 2] + Array(1...12) + [99])

        let statement = PostgresStatement(nested)
        #expect(statement.sql == nested.sql)
        #expect(statement.parameters.count == 4)
    }

    @Test("the text of one call site is the same whatever its values")
    func stableText() {
        func lookup(_ reference: String, _ bound: Double?) -> PostgresQuery {
            "SELECT 1 WHERE \(reference)::text <> '' AND \(bound)::float8 IS NULL"
        }
        #expect(lookup("a", nil).sql == lookup("something longer", 4.5).sql)
    }
}

@Suite("Queries with interpolated values against PostgreSQL", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PostgresQueryDatabaseTests {
    @Test("every supported type binds by interpolation and decodes into a tuple, NULL optionals included")
    func everyTypeRoundTrips() async throws {
        try await TestDatabase.withClient() { client in
            let id = UUID()
            let when = Date(timeIntervalSince1970: 1_763_812_345.123456)
            let bytes: [UInt8] = [0, 0x5C, 0x27, 0xFF, 1]
            let text = "Zoë \"quoted\" 'single' \\ 署名 ✍️"
            let missingText: String? = nil, missingNumber: Double? = nil, missingID: UUID? = nil
            let missingBytes: PostgresBytes? = nil
            let result = try await client.query("""
                SELECT \(text)::text, \(Int64.max)::int8, \(Int32.min)::int4, \(Int16(-7))::int2, \(42)::int8, \(true)::bool,
                       \(51.501_364)::float8, \(bytes)::bytea, \(PostgresBytes(bytes))::bytea, \(when)::timestamptz, \(id)::uuid,
                       \(PostgresJSONB(#"{"b": [1, 2.5, null], "a": "x"}"#))::jsonb, \(Substring("sub"))::text,
                       \(missingText)::text, \(missingNumber)::float8, \(missingID)::uuid, \(missingBytes)::bytea
                """)
            let row = try #require(result.first)
            let (decodedText, int64, int32, int16, int, bool, double, decodedBytes, wrappedBytes, date, uuid, json, substring,
                 nullText, nullNumber, nullID, nullBytes) = try row.decode(
                (String, Int64, Int32, Int, Int, Bool, Double, [UInt8], PostgresBytes, Date, UUID, String, String,
                 String?, Double?, UUID?, [UInt8]?).self)
            #expect(decodedText == text)
            #expect(int64 == Int64.max)
            #expect(int32 == Int32.min)
            #expect(int16 == -7)
            #expect(int == 42)
            #expect(bool)
            #expect(double == 51.501_364)
            #expect(decodedBytes == bytes)
            #expect(wrappedBytes == PostgresBytes(bytes))
            #expect(abs(date.timeIntervalSince1970 - when.timeIntervalSince1970) < 0.000_001)
            #expect(uuid == id)
            #expect(json == #"{"a": "x", "b": [1, 2.5, null]}"#)
            #expect(substring == "sub")
            #expect(nullText == nil && nullNumber == nil && nullID == nil && nullBytes == nil)
        }
    }

    @Test("a tuple whose size is not the row's, or a NULL into a non-optional, is a typed error")
    func mismatches() async throws {
        try await TestDatabase.withClient() { client in
            let row = try #require(try await client.query("SELECT \(1)::int8, \("two")::text, NULL::text").first)
            #expect { try row.decode((Int, String).self) } throws: { ($0 as? PostgresError)?.kind == .decodingFailed }
            #expect { try row.decode((Int, String, String?, Int).self) } throws: { ($0 as? PostgresError)?.kind == .decodingFailed }
            #expect { try row.decode((Int, String, String).self) } throws: { ($0 as? PostgresError)?.kind == .decodingFailed }
            let (one, two, none) = try row.decode((Int, String, String?).self)
            #expect(one == 1 && two == "two" && none == nil)
            #expect(try row.decode(String.self, "text") == "two")
        }
    }

    @Test("a session runs, executes and queues interpolated statements; one call site is prepared once")
    func sessionAndPreparedStatements() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let table = TestDatabase.uniqueTable("t_query")
            try await client.query("CREATE TABLE \(unescaped: table) (n int8, label text)")
            let prepared = try await client.withConnection { session in
                for n in 1...5 {
                    session.enqueue("INSERT INTO \(unescaped: table) VALUES (\(n), \("n\(n)"))")
                }
                try await session.execute("DELETE FROM \(unescaped: table) WHERE n = \(5)")
                return try await session.query("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE \("%" + table + "%")")
                    .first!.decode(Int.self, 0)
            }
            #expect(prepared == 2, "five inserts from one call site share one prepared statement")
            let rows = try await client.query("SELECT n, label FROM \(unescaped: table) WHERE n >= \(2) ORDER BY n").rows
            #expect(try rows.map { try $0.decode((Int, String).self) }.map { "\($0.0)\($0.1)" } == ["2n2", "3n3", "4n4"])
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }
}
