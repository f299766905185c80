import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Postgres
import ProofStore
import Testing
import TestSupport

/// A new proof's point stream, canonical ink and signature image never reach PostgreSQL's files in
/// clear: the database's heap, TOAST and index files, and the WAL written meanwhile, are read as
/// bytes after a checkpoint. A value stored in clear (the signer's name, not sealed yet) is found
/// in the same files, which proves the search reads what PostgreSQL wrote.
@Suite("Sealed at rest", .needsDatabase)
struct SealedAtRestTests {
    @Test("heap, TOAST, indexes and WAL hold no clear byte run of a new proof's body, ink or PNG; a clear column is found there")
    func noClearBytesOnDisk() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                // Stored uncompressed, so that clear bytes would show as they are (lz4 or pglz would hide
                // them from a byte search without making them any less clear); sealed bytes do not compress.
                try await harness.scratch.asSuperuser { admin in
                    _ = try await admin.query("""
                        ALTER TABLE proofs ALTER COLUMN body SET STORAGE EXTERNAL, ALTER COLUMN ink SET STORAGE EXTERNAL,
                            ALTER COLUMN png SET STORAGE EXTERNAL
                        """)
                }
                let started = Date().addingTimeInterval(-1)
                let seed = Double.random(in: 1...1000)
                let signer = "Sealtest \(UInt32.random(in: 100_000...999_999)) Quux"
                let body = Samples.proofJSON(signer: signer, ink: Samples.inkJSON(seed: seed))
                let reference = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: body))
                try #require(upload.status == .created)
                let proofs = ProofRepository(database: harness.database, dataKeys: TestDataKeys.provider)
                let png = try #require(try await proofs.png(reference: reference)?.bytes)
                let ink = try #require(try await proofs.ink(reference: reference)?.ink)
                // Byte runs only this proof holds: the first points of its random stroke, the middle of its PNG and ink.
                let strokes = try #require(body.range(of: #""strokes":[["#))
                let pointRun = Array(body[strokes.upperBound...].prefix(60).utf8)
                let markers: [(String, [UInt8])] = [("the point stream", pointRun), ("the PNG", Array(png[png.count / 2..<png.count / 2 + 48])),
                                                    ("the canonical ink", Array(ink[ink.count / 2..<ink.count / 2 + 48]))]
                let files = try await harness.scratch.asSuperuser { admin -> [String] in
                    _ = try await admin.query("CHECKPOINT")
                    let directory = try await admin.query("SELECT current_setting('data_directory')").decode(String.self, row: 0, column: 0)
                    let database = try await admin.query("SELECT oid::text FROM pg_database WHERE datname = current_database()")
                        .decode(String.self, row: 0, column: 0)
                    let heap = URL(fileURLWithPath: directory).appendingPathComponent("base/\(database)")
                    let wal = URL(fileURLWithPath: directory).appendingPathComponent("pg_wal")
                    let heapFiles = try FileManager.default.contentsOfDirectory(atPath: heap.path).map { heap.appendingPathComponent($0).path }
                    let walFiles = try FileManager.default.contentsOfDirectory(atPath: wal.path).map { wal.appendingPathComponent($0).path }
                        .filter { path in
                            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
                            return modified >= started && !path.hasSuffix(".history")
                        }
                    return heapFiles + walFiles
                }
                #expect(files.contains { $0.contains("pg_wal") }, "the WAL written since the upload is read")
                var found: [String: [String]] = [:]
                let wanted = markers + [("the signer's name (in clear: the control)", Array(signer.utf8))]
                for path in files {
                    guard let data = FileManager.default.contents(atPath: path) else { continue }
                    for (what, marker) in wanted where Self.contains(data, marker) { found[what, default: []].append(path) }
                }
                #expect(found["the signer's name (in clear: the control)"]?.isEmpty == false, "the search finds a clear column in \(files.count) files")
                for (what, _) in markers {
                    #expect(found[what] == nil, "\(what) is in clear in \(found[what] ?? [])")
                }
            }
        }
    }

    /// Whether `data` holds `marker` (memchr for its first byte, then memcmp: the WAL read here can
    /// be hundreds of megabytes).
    static func contains(_ data: Data, _ marker: [UInt8]) -> Bool {
        guard let first = marker.first else { return true }
        return data.withUnsafeBytes { (haystack: UnsafeRawBufferPointer) -> Bool in
            marker.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, haystack.count >= needle.count else { return false }
                var offset = 0
                let last = haystack.count - needle.count
                while offset <= last, let hit = memchr(base + offset, Int32(first), last - offset + 1) {
                    offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + offset, needle.baseAddress!, needle.count) == 0 { return true }
                    offset += 1
                }
                return false
            }
        }
    }
}
