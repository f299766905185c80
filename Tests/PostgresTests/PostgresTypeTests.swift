import Foundation
import Postgres
import Testing

@Suite("PostgreSQL types round trip", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PostgresTypeTests {
    @Test func everySupportedTypeRoundTrips() async throws {
        try await TestDatabase.withClient() { client in
            let id = UUID()
            let when = Date(timeIntervalSince1970: 1_763_812_345.123456)
            var megabyte = [UInt8](repeating: 0, count: 1 << 20)
            for index in megabyte.indices { megabyte[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 7) }
            megabyte[0] = 0; megabyte[1] = 0x5C; megabyte[2] = 0x27  // NUL, backslash, quote: nothing is escaped
            let text = "Zoë \"quoted\" 'single' \\ 署名 ✍️"
            let result = try await client.query(
                """
                SELECT $1::text, $2::int8, $3::int4, $4::int2, $5::bool, $6::float8, $7::bytea, $8::timestamptz,
                       $9::uuid, $10::jsonb, NULL::text, $11::text, $12::bool
                """,
                [text, Int64.max, Int32.min, Int16(-7), true, 51.501_364, megabyte, when, id,
                 PostgresJSONB(#"{"b": [1, 2.5, null], "a": "x"}"#), String?.none, false])
            let row = try #require(result.first)
            #expect(try row.decode(String.self, 0) == text)
            #expect(try row.decode(Int64.self, 1) == Int64.max)
            #expect(try row.decode(Int32.self, 2) == Int32.min)
            #expect(try row.decode(Int.self, 3) == -7)
            #expect(try row.decode(Bool.self, 4) == true)
            #expect(try row.decode(Double.self, 5) == 51.501_364)
            let bytes = try row.decode([UInt8].self, 6)
            #expect(bytes.count == megabyte.count)
            #expect(bytes == megabyte)
            let decodedDate = try row.decode(Date.self, 7)
            #expect(abs(decodedDate.timeIntervalSince1970 - when.timeIntervalSince1970) < 0.000_001)
            #expect(try row.decode(UUID.self, 8) == id)
            // jsonb normalises key order and spacing: the server parsed what we sent.
            #expect(try row.decode(String.self, 9) == #"{"a": "x", "b": [1, 2.5, null]}"#)
            #expect(try row.decode(String?.self, 10) == nil)
            #expect(try row.decode(String?.self, 11) == nil)
            #expect(try row.decode(Bool.self, 12) == false)
            #expect(throws: PostgresError.self) { try row.decode(String.self, 10) }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, 0) }
        }
    }

    @Test func timestamptzKeepsTheInstantWhateverTheSessionZone() async throws {
        try await TestDatabase.withClient(poolSize: 1) { client in
            let value = try await client.withConnection { session in
                try await session.execute("SET TIME ZONE 'Asia/Kolkata'")
                let result = try await session.query("SELECT '2025-11-22T10:00:00+01:00'::timestamptz, $1::timestamptz::text",
                                                      [Date(timeIntervalSince1970: 0)])
                try await session.execute("RESET TIME ZONE")
                return (try result.decode(Date.self, row: 0, column: 0), try result.decode(String.self, row: 0, column: 1))
            }
            #expect(value.0 == Date(timeIntervalSince1970: 1_763_802_000))
            #expect(value.1 == "1970-01-01 05:30:00+05:30")
        }
    }

    @Test func namedColumnsAndAffectedRows() async throws {
        try await TestDatabase.withClient() { client in
            let table = "t_named_\(UInt32.random(in: 0...UInt32.max))"
            try await client.query("CREATE TABLE \(unescaped: table) (id int8 PRIMARY KEY, label text)")
            let insert = try await client.query("INSERT INTO \(unescaped: table) SELECT g, 'n' || g FROM generate_series(1, 5) g")
            #expect(insert.affectedRows == 5)
            let rows = try await client.query("SELECT id, label FROM \(table) WHERE id > $1 ORDER BY id", [2]).rows
            #expect(try rows.map { try $0.decode(Int.self, "id") } == [3, 4, 5])
            #expect(try rows.map { try $0.decode(String.self, "label") } == ["n3", "n4", "n5"])
            #expect(throws: PostgresError.self) { try rows[0].decode(String.self, "missing") }
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }

    @Test("a text value with a NUL byte is refused at binding, so nothing is stored cut short")
    func nulInTextIsRefused() async throws {
        try await TestDatabase.withClient() { client in
            let table = "t_nul_\(UInt32.random(in: 0...UInt32.max))"
            try await client.query("CREATE TABLE \(unescaped: table) (label text)")
            let forged = "Ada\u{0}Lovelace-Forged"
            await #expect {
                try await client.query("INSERT INTO \(unescaped: table) (label) VALUES (\(forged))")
            } throws: { error in
                (error as? PostgresError)?.kind == .invalidParameter && "\(error)".contains("$1")
            }
            let count = try await client.query("SELECT count(*) AS n FROM \(unescaped: table)").rows[0]
            #expect(try count.decode(Int.self, "n") == 0)
            // Other values, and bytea with zero bytes, still bind.
            try await client.query("INSERT INTO \(unescaped: table) (label) VALUES (\("Ada Lovelace"))")
            let bytes = try await client.query("SELECT \(PostgresBytes([0, 1, 0]))::bytea AS b").rows[0]
            #expect(try bytes.decode([UInt8].self, "b") == [0, 1, 0])
            try await client.query("DROP TABLE \(unescaped: table)")
        }
    }
}
