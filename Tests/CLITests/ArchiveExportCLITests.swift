import Cryptography
import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// `countersign export --archive` records the bundle it wrote: the `proofs_archived` event's
/// `bundle_sha256` must be the SHA-256 of the file on disk (the export hashes what it writes only
/// when archiving), and a plain export records nothing.
@Suite("Archived exports (the countersign binary)", .needsDatabase)
struct ArchiveExportCLITests {
    @Test("the recorded bundle_sha256 is the SHA-256 of the bundle written; without --archive nothing is recorded")
    func archiveRecordsTheFile() async throws {
        try await KeyCustodyTests.withFolderAndDatabase(prefix: "archcli", Self.check)
    }

    static func check(_ folder: URL, _ scratch: ScratchDatabase) async throws {
        let keyFile = folder.appendingPathComponent("key.pem")
        try Data(try Ed25519PrivateKey.generate().pemRepresentation().utf8).write(to: keyFile)
        let environment = ["DATABASE_URL": scratch.url, "CHECKPOINT_KEY_FILE": keyFile.path]
        let client = scratch.client(poolSize: 1)
        func archivedEvents() async throws -> [[String: String]] {
            try await client.query("SELECT details::text AS details FROM audit_events WHERE action = 'proofs_archived' ORDER BY seq").rows.map { row in
                let text: String = try row.decode("details")
                return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String] ?? [:]
            }
        }
        do {
            try await AuditLog(database: client).append(.proofPNGRead, subject: "delivery:A-1", origin: .system)
            let plain = try await KeyCustodyTests.run(["export", "--since", "2020-01-01", "--until", "2020-02-01", "-o", "plain.zip"],
                                                      environment: environment, in: folder)
            #expect(plain.status == 0, "\(plain.errors)")
            #expect(try await archivedEvents().isEmpty)
            let archived = try await KeyCustodyTests.run(["export", "--since", "2020-01-01", "--until", "2020-02-01", "--archive", "-o", "month.zip"],
                                                         environment: environment, in: folder)
            #expect(archived.status == 0, "\(archived.errors)")
            let written = SHA256.hex(Array(try Data(contentsOf: folder.appendingPathComponent("month.zip"))))
            let events = try await archivedEvents()
            #expect(events.count == 1)
            #expect(events.first?["bundle_sha256"] == written)
            #expect(archived.output.contains(written))
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
    }
}
