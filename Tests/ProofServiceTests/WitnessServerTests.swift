import Cryptography
import Foundation
import ProofService
import ProofStore
import Testing
import TestSupport

/// HTTP witnesses and the RFC 3161 timestamp authority, against scripts/witness-test-server.py:
/// a local receiver and an `openssl ts -reply` TSA with a CA made for the run, on a free loopback port.
@Suite("Witness servers", .needsDatabase)
struct WitnessServerTests {
    /// The running test server: its port, the CA that issued the TSA's certificate, its folder.
    struct Server {
        let process: Process
        let input: Pipe
        let port: Int
        let caFile: String
        let root: String

        /// Ends the server we started (closing its standard input stops it; the pid is ours).
        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/witness-test-server.py").path

    static func start(failFirst: Int) throws -> Server {
        let root = NSTemporaryDirectory() + "witness-server-\(UInt64.random(in: 0...UInt64.max))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, root, "--fail-first", String(failFirst)]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let answer = try JSONSerialization.jsonObject(with: line) as? [String: Any]
        guard let port = answer?["port"] as? Int, let ca = answer?["ca"] as? String else {
            try? input.fileHandleForWriting.close()
            throw WitnessError.malformed(file: "witness-test-server", reason: "no port line")
        }
        return Server(process: process, input: input, port: port, caFile: ca, root: root)
    }

    @Test("a checkpoint goes to the directory, to an HTTP witness (after a refused first attempt) and gets an RFC 3161 token that openssl verifies")
    func publishEverywhere() async throws {
        let server = try Self.start(failFirst: 1)
        defer { server.stop() }
        try await ScratchDatabase.with(prefix: "witsrv") { _, database in
            let path = NSTemporaryDirectory() + "witness-\(UInt64.random(in: 0...UInt64.max))"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let base = "http://127.0.0.1:\(server.port)"
            let publisher = CheckpointPublisher(
                store: AuditCheckpointStore(database: database, key: try Ed25519PrivateKey.generate()),
                receipts: WitnessReceiptStore(database: database), directory: WitnessDirectory(path: path),
                receivers: [HTTPWitness(url: base + "/witness", timeout: .seconds(20), attempts: 3, backoff: .milliseconds(10))],
                timestampAuthority: HTTPWitness(url: base + "/tsa", timeout: .seconds(20)))
            try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:S-1", origin: .system)
            let stored = try #require(try await publisher.tick())

            let file = try WitnessFile(stored.checkpoint)
            #expect(FileManager.default.contents(atPath: server.root + "/received/" + file.name).map(Array.init) == file.bytes,
                    "the receiver got the exact bytes, named")
            let token = path + "/" + WitnessFile.tokenName(for: file.name)
            #expect(FileManager.default.fileExists(atPath: token))
            let verifier = TimestampVerifier(caFile: server.caFile)
            try await verifier.verify(data: path + "/" + file.name, token: token)

            // The token is over those bytes only: another file, or another CA, fails.
            let other = path + "/other.json"
            _ = FileManager.default.createFile(atPath: other, contents: Data(file.bytes + [0x20]))
            await #expect(throws: WitnessError.self) { try await verifier.verify(data: other, token: token) }
            await #expect(throws: WitnessError.self) {
                try await TimestampVerifier(caFile: "/etc/ssl/certs/ca-certificates.crt").verify(data: path + "/" + file.name, token: token)
            }

            let receipts = try await WitnessReceiptStore(database: database).page(afterID: 0, limit: 5).items[0].receipts
            #expect(Set(receipts.map(\.kind)) == [.directory, .tsa, .http])
            #expect(receipts.allSatisfy { $0.succeeded }, "\(receipts)")
        }
    }

    @Test("a TimeStampReq is DER for SHA-256 of the bytes with a positive 8-byte nonce; a reply for other bytes is refused")
    func request() throws {
        let request = TimestampRequest(for: Array("checkpoint".utf8))
        let der = request.der
        #expect(der.count == 69 && der[0] == 0x30 && der[1] == 67)
        #expect(request.nonce[0] & 0x80 == 0)
        #expect(Array(der[2..<5]) == [0x02, 0x01, 0x01], "version 1")
        let refused = TimestampRequest(for: Array("other".utf8))
        // A granted reply whose token names another imprint.
        let token = TimestampRequest.tlv(0x30, TimestampRequest.tlv(0x04, refused.imprint) + TimestampRequest.tlv(0x02, refused.nonce))
        let reply = TimestampRequest.tlv(0x30, TimestampRequest.tlv(0x30, [0x02, 0x01, 0x00]) + token)
        #expect(throws: WitnessError.self) { try request.accepts(reply).get() }
        #expect(throws: Never.self) { try refused.accepts(reply).get() }
        let rejection = TimestampRequest.tlv(0x30, TimestampRequest.tlv(0x30, [0x02, 0x01, 0x02]))
        #expect(throws: WitnessError.self) { try refused.accepts(rejection).get() }
        #expect(throws: WitnessError.self) { try refused.accepts([0x30, 0x85, 0xFF]).get() }
    }
}
