import Foundation
import Postgres
import ProofStore
import Testing
import TestSupport

/// Issue 41, finding 5: what the runtime role can change without the service (no audit event)
/// makes `countersign verify --database` exit 1 and name the row.
@Suite("verify --database finds changes made without their event",
       .needsTwoRoles)
struct SilentChangeCLITests {
    /// Each change as the runtime role (`%TOKEN%`: a live dispatcher key's token), with the kind and subject verify must name.
    static let cases: [(name: String, sql: String, kind: String, subject: String)] = [
        ("a cancellation through the definer function, with no event",
         "SELECT * FROM countersign_close_delivery('SILENT-1', 'cancelled', 'x', '%TOKEN%', now())",
         "closure_without_event", "delivery:SILENT-1"),
        ("a delivery marked delivered with no proof",
         "UPDATE deliveries SET status = 'delivered', delivered_at = now(), updated_at = now() WHERE reference = 'SILENT-1'",
         "delivered_without_proof", "delivery:SILENT-1"),
        ("an admin key inserted with no key_created event",
         "INSERT INTO api_keys (id, name, role, token_sha256) VALUES ('00000000-0000-4000-8000-00000000a11e', 'backdoor', 'admin', sha256('x'))",
         "key_without_event", "key:00000000-0000-4000-8000-00000000a11e"),
    ]

    @Test("each silent change as the runtime role makes verify --database exit 1 naming it", arguments: cases.indices)
    func silentChangeIsFound(_ index: Int) async throws {
        let change = Self.cases[index]
        try await KeyCustodyTests.withFolderAndDatabase(prefix: "silent") { folder, scratch in
            let runtime = scratch.client(poolSize: 1)
            do {
                let (key, token) = try await APIKeyRepository(database: runtime).create(name: "dispatch", role: .dispatcher)
                _ = try await DeliveryRepository(database: runtime, dataKeys: TestDataKeys.provider).create(
                    NewDelivery(reference: "SILENT-1", recipientName: "R", address: "A", destination: nil), by: key.actor)
                // The delivery's event commits under its data key's salt: verify opens the key with the file.
                let keys = ["DATA_KEY_FILE": try TestDataKeys.writeFile(in: folder)]
                let before = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--trust-embedded-key"],
                                                           environment: keys, in: folder)
                #expect(before.status == 0, "\(before.output)\(before.errors)")
                let sql = change.sql.replacingOccurrences(of: "%TOKEN%", with: token)
                try await runtime.query("\(unescaped: sql)")
                let after = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--trust-embedded-key"],
                                                          environment: keys, in: folder)
                #expect(after.status == 1, "\(change.name): \(after.output)\(after.errors)")
                #expect(after.output.contains(change.kind) && after.output.contains(change.subject), "\(change.name): \(after.output)")
            } catch {
                await runtime.shutdown()
                throw error
            }
            await runtime.shutdown()
        }
    }
}
