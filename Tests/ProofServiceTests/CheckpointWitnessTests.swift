import Cryptography
import Foundation
import Postgres
import ProofService
import ProofStore
import Testing
import TestSupport

/// The witness directory and the scheduled publisher: files appear whole, are never overwritten,
/// sort by signing time and read back as the checkpoint that was signed.
@Suite("Checkpoint witnesses")
struct CheckpointWitnessTests {
    static func temporaryDirectory() -> String {
        NSTemporaryDirectory() + "witness-\(UInt64.random(in: 0...UInt64.max))"
    }

    static func checkpoint(at micros: Int64, key: Ed25519PrivateKey) throws -> AuditCheckpoint {
        let heads = (0..<16).map { AuditChainHead(chain: Int16($0), seq: Int64($0) * 3, hash: [UInt8](repeating: UInt8($0), count: 32)) }
        return try AuditCheckpoint.sign(heads: heads, key: key, at: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
    }

    @Test("a witness file is written whole, read back exactly, never overwritten, and names sort by signing time")
    func directory() async throws {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = WitnessDirectory(path: path)
        let key = try Ed25519PrivateKey.generate()
        // Written out of order: the listing is by signing time all the same (1e9 µs sorts after 9e8 µs).
        let late = try WitnessFile(try Self.checkpoint(at: 1_000_000_000, key: key))
        let early = try WitnessFile(try Self.checkpoint(at: 900_000_000, key: key))
        try await directory.write(late.bytes, as: late.name)
        try await directory.write(early.bytes, as: early.name)
        #expect(try directory.checkpointNames() == [early.name, late.name])
        #expect(try directory.files() == [early, late])
        #expect(late.name.hasPrefix("checkpoint-00000000001000000000-"))

        await #expect(throws: WitnessError.alreadyWitnessed(path: path + "/" + late.name)) {
            try await directory.write(early.bytes, as: late.name)
        }
        #expect(directory.read(late.name) == late.bytes, "the first copy stays")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no temporary file is left behind")
    }

    @Test("a renamed or edited witness file is reported, not reordered or trusted")
    func malformed() async throws {
        let key = try Ed25519PrivateKey.generate()
        let file = try WitnessFile(try Self.checkpoint(at: 5_000_000, key: key))
        #expect(throws: WitnessError.self) { try WitnessFile(name: "checkpoint-1.json", bytes: file.bytes) }
        #expect(throws: WitnessError.self) { try WitnessFile(name: file.name, bytes: Array("{\"seq\":1}".utf8)) }
        #expect(try WitnessFile(name: file.name, bytes: file.bytes) == file)
    }

    @Test("the scheduled publisher signs only when a chain moved, writes each checkpoint to the directory and records receipts",
          .needsDatabase)
    func publisher() async throws {
        try await ScratchDatabase.with(prefix: "publish") { _, database in
            let path = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let key = try Ed25519PrivateKey.generate()
            let receipts = WitnessReceiptStore(database: database)
            let publisher = CheckpointPublisher(store: AuditCheckpointStore(database: database, key: key), receipts: receipts,
                                                directory: WitnessDirectory(path: path))
            let log = AuditLog(database: database)
            try await log.append(.proofPNGRead, subject: "delivery:P-1", origin: .system)
            let first = try #require(try await publisher.tick())
            #expect(try await publisher.tick() == nil, "no chain moved")
            try await log.append(.proofPNGRead, subject: "delivery:P-2", origin: .system)
            let second = try #require(try await publisher.tick())

            let files = try WitnessDirectory(path: path).files()
            #expect(files.map(\.checkpoint) == [first.checkpoint, second.checkpoint])
            let page = try await receipts.page(afterID: 0, limit: 10)
            #expect(page.items.map(\.stored) == [first, second])
            #expect(page.items.allSatisfy { $0.receipts.count == 1 && $0.receipts[0].succeeded && $0.receipts[0].kind == .directory })
            #expect(page.items[0].receipts[0].witness == files[0].name)
            #expect(page.nextID == nil)
            let firstPage = try await receipts.page(afterID: 0, limit: 1)
            #expect(firstPage.items.map(\.stored) == [first] && firstPage.nextID == first.id)
        }
    }

    @Test("a witness that cannot take a checkpoint gets it on the next tick; the failure is recorded",
          .needsDatabase)
    func retry() async throws {
        try await ScratchDatabase.with(prefix: "publish") { _, database in
            let parent = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            // The witness directory's parent is a file for now: mkdir fails.
            _ = FileManager.default.createFile(atPath: parent, contents: Data())
            let receipts = WitnessReceiptStore(database: database)
            let publisher = CheckpointPublisher(store: AuditCheckpointStore(database: database, key: try Ed25519PrivateKey.generate()),
                                                receipts: receipts, directory: WitnessDirectory(path: parent + "/witness"))
            try await AuditLog(database: database).append(.proofPNGRead, subject: "delivery:R-1", origin: .system)
            let signed = try #require(try await publisher.tick())
            try FileManager.default.removeItem(atPath: parent)
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
            #expect(try await publisher.tick() == nil, "nothing new to sign, but the pending checkpoint is written")
            #expect(try WitnessDirectory(path: parent + "/witness").files().map(\.checkpoint) == [signed.checkpoint])
            let outcomes = try await receipts.page(afterID: 0, limit: 10).items[0].receipts.map(\.succeeded)
            #expect(outcomes == [false, true])
        }
    }
}
