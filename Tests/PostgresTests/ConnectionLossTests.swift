import CLibPQ
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import Postgres
import Testing
import TestSupport

/// How a failure is classified when libpq reports its own error (no SQLSTATE) while the connection
/// status still says OK. Found by the reliability crash test (docs/reliability.md): during an
/// immediate shutdown of PostgreSQL two uploads in 400 got a 500, because libpq returned "server
/// closed the connection unexpectedly" with the status still `CONNECTION_OK` (a failed write is
/// reported once the backend's farewell notice has been read, before the end of the stream is),
/// and that was taken for a failed query instead of a lost connection (503).
///
/// That exact libpq timing cannot be produced on demand, so these tests build the state it leaves:
/// a connection whose server has gone while libpq has not noticed yet, and a libpq error result
/// without a SQLSTATE (`PQmakeEmptyPGresult`), and check the classification, with a control
/// where the server is still there.
@Suite("Connection loss")
struct ConnectionLossTests {
    /// A fake server and a connection to it, already past the startup.
    static func connected() throws -> (FakeDyingPostgres, PostgresConnection) {
        let server = try FakeDyingPostgres()
        Thread { server.acceptOne() }.start()
        return (server, try PostgresConnection(url: server.url, connectTimeout: PostgresConfiguration.testConnectTimeoutSeconds))
    }

    /// The error made from a libpq error result without a SQLSTATE on `connection`.
    static func libpqError(on connection: PostgresConnection) -> PostgresError {
        let result = PQmakeEmptyPGresult(connection.handle, PGRES_FATAL_ERROR)
        defer { PQclear(result) }
        return PostgresError.from(result: result, connection: connection.handle)
    }

    @Test("libpq's own error on a connection whose server has gone is a lost connection, even while the status says OK")
    func serverGone() throws {
        let (server, connection) = try Self.connected()
        server.finish()  // the server closes its end; libpq has not read anything since
        #expect(PQstatus(connection.handle) == CONNECTION_OK, "precondition: libpq has not noticed")

        let error = Self.libpqError(on: connection)
        #expect(error.kind == .connectionLost, "\(error)")
        #expect(error.isTransient)
        #expect(PostgresError.from(result: nil, connection: connection.handle).kind == .connectionLost)
        #expect(connection.isUsable == false)
    }

    @Test("the same error on a connection whose server is still there stays a failed query")
    func serverStillThere() throws {
        let (server, connection) = try Self.connected()
        let error = Self.libpqError(on: connection)
        #expect(error.kind == .queryFailed, "\(error)")
        #expect(error.isTransient == false)
        #expect(connection.isUsable, "probing must not disturb a healthy connection")
        server.finish()
    }

    @Test("the server's FATAL goodbye, handed over as a query's error before the socket closes, is a lost connection")
    func fatalMessageMeansLost() {
        #expect(PostgresError.isFatal("FATAL:  terminating connection due to administrator command"))
        #expect(PostgresError.isFatal("server closed the connection unexpectedly\nFATAL:  terminating connection due to administrator command"))
        #expect(!PostgresError.isFatal("ERROR:  relation \"nope\" does not exist"))
        #expect(!PostgresError.isFatal("server closed the connection unexpectedly"))
    }
}

/// Just enough of a PostgreSQL server for one connection on a Unix socket: it accepts the startup
/// without authentication and keeps the connection open until `finish()`, which closes it.
final class FakeDyingPostgres: @unchecked Sendable {
    let directory: String
    let port = 5999
    private let listener: Int32
    private let started = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    struct SocketError: Error, CustomStringConvertible {
        let call: String
        var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fakepg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array("\(directory)/.s.PGSQL.\(port)".utf8CString)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.prefix(raw.count - 1).enumerated() { raw[index] = UInt8(bitPattern: byte) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw SocketError(call: "bind/listen")
        }
        listener = fd
    }

    deinit {
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The libpq URL of this server.
    var url: String { "postgres:///fake?host=\(directory)&port=\(port)&user=fake" }

    /// Accepts one connection, answers its startup and holds it open until `finish()`.
    func acceptOne() {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { started.signal(); return }
        if readPacket(client) != nil {  // the startup packet
            send(client, [UInt8(ascii: "R"), 0, 0, 0, 8, 0, 0, 0, 0, UInt8(ascii: "Z"), 0, 0, 0, 5, UInt8(ascii: "I")])
        }
        started.signal()
        release.wait()
        close(client)
        done.signal()
    }

    /// Closes the served connection and waits until it is closed.
    func finish() {
        started.wait()
        release.signal()
        done.wait()
    }

    private func readPacket(_ fd: Int32) -> [UInt8]? {
        guard let header = readExactly(fd, 4) else { return nil }
        let length = Int(header.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length >= 8, length < 1 << 16 else { return nil }
        return readExactly(fd, length - 4)
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, count - filled, 0) }
            if n <= 0 { return nil }
            filled += n
        }
        return bytes
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
