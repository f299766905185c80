import Foundation
import HummingbirdTesting
import ProofService
import Testing
import TestSupport
@testable import ProofAPI
#if canImport(Glibc)
import Glibc
#endif

@Suite("Export slots")
struct ExportSlotsTests {
    @Test("at most `limit` exports at once; a slot is given back when its holder goes")
    func bounded() {
        let slots = ExportSlots(limit: 2)
        var first: ExportSlots.Slot? = slots.acquire()
        let second = slots.acquire()
        #expect(first != nil && second != nil)
        #expect(slots.acquire() == nil, "a third export is refused")
        #expect(slots.inUse == 2)
        first = nil
        #expect(slots.inUse == 1)
        let third = slots.acquire()
        #expect(third != nil, "the freed slot can be taken again")
        #expect(slots.acquire() == nil)
        _ = (second, third)
    }

    @Test("a limit below one still allows one export")
    func atLeastOne() {
        let slots = ExportSlots(limit: 0)
        let only = slots.acquire()
        #expect(only != nil)
        #expect(slots.acquire() == nil)
        _ = only
    }
}

@Suite("Export slots over HTTP", .needsDatabase)
struct ExportSlotsHTTPTests {
    @Test("a finished export gives its slot back: sequential exports with a limit of one all succeed")
    func slotsAreReturned() async throws {
        try await APITestHarness.with { harness in
            var policy = APIPolicy()
            policy.maxConcurrentExports = 1
            try await harness.application(policy: policy).test(.router) { client in
                _ = try await harness.createDeliveryWithProof(client)
                for format in ["zip", "ndjson", "csv", "zip"] {
                    let response = try await client.execute(uri: "/v1/exports/proofs?format=\(format)", method: .get,
                                                            headers: harness.headers(.auditor))
                    #expect(response.status == .ok, "\(format)")
                    #expect(!response.bytes.isEmpty)
                }
            }
        }
    }
}

/// Issue 41, finding 4: a client that opens exports and never reads them held both slots and
/// their snapshots for ever (the idle timeout sees pending bytes, not silence).
@Suite("A stalled export", .needsDatabase)
struct StalledExportTests {
    /// Opens a connection with a tiny receive buffer, asks for `path` as `token` and never reads.
    static func openWithoutReading(port: Int, path: String, token: String) throws -> Int32 {
        let fd = try RawHTTP.connect(port: port, receiveBuffer: 4096)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    @Test("a reader that stops frees its export slot and its snapshot within WRITE_TIMEOUT_SECONDS")
    func stalledReaderFreesItsSlot() async throws {
        try await HostileInputTests.withLiveServer(configure: {
            $0.writeTimeoutSeconds = 3
            $0.policy.maxConcurrentExports = 1
        }) { port, _, harness in
            try await harness.application().test(.router) { client in
                let (_, upload) = try await harness.createDeliveryWithProof(client)
                #expect(upload.status == .created)
            }
            // Enough proofs that the export cannot fit in the socket buffers: copies of the one
            // stored, written past the triggers.
            try await harness.scratch.asSuperuser { admin in
                try await admin.withConnection { session in
                    try await session.execute("SET session_replication_role = replica")
                    try await session.execute("""
                        INSERT INTO proofs SELECT (jsonb_populate_record(p, jsonb_build_object('id', gen_random_uuid()))).*
                        FROM proofs p, generate_series(1, 1500)
                        """)
                    try await session.execute("SET session_replication_role = DEFAULT")
                }
            }
            let token = harness.tokens[.auditor]!
            let path = "/v1/exports/proofs?format=ndjson"
            let stalled = try Self.openWithoutReading(port: port, path: path, token: token)
            defer { close(stalled) }
            let export = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n".utf8)
            // While the stalled export holds the only slot, another gets 503 exports_busy...
            var busy: Int?
            for _ in 0..<20 where busy != 503 {
                try await Task.sleep(for: .milliseconds(100))
                busy = try await RawHTTP.perform(port: port, export, timeout: 5).status
            }
            #expect(busy == 503, "the first export never held the slot (it was not stalled?)")
            // ...until the write timeout closes the stalled connection and the slot comes back.
            var freed: RawHTTP.Answer?
            for _ in 0..<60 {
                try await Task.sleep(for: .milliseconds(500))
                let answer = try await RawHTTP.perform(port: port, export, timeout: 60, untilClosed: true)
                if answer.status == 200 { freed = answer; break }
            }
            #expect(freed != nil, "the slot never came back")
            let idle = try await harness.database.query("""
                SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'
                """).decode(Int64.self, row: 0, column: "n")
            #expect(idle == 0, "a snapshot is still held")
        }
    }
}
