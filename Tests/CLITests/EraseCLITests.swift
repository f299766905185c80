import Foundation
import Postgres
import ProofService
import ProofStore
import Testing
import TestSupport

/// `countersign erase`: the same erasure as the API, acting only as the admin key whose token the
/// file holds; the chain still verifies and `verify --database` names the erased delivery.
@Suite("countersign erase", .needsTwoRoles)
struct EraseCLITests {
    @Test("erase refuses a dispatcher's token, erases with an admin's, says so again without changing anything, and verify lists it")
    func eraseFromTheCommandLine() async throws {
        try await KeyCustodyTests.withFolderAndDatabase(prefix: "erase_cli") { folder, scratch in
            let runtime = scratch.client(poolSize: 1)
            do {
                let keys = APIKeyRepository(database: runtime)
                let (dispatcher, dispatcherToken) = try await keys.create(name: "dispatch", role: .dispatcher)
                let (_, adminToken) = try await keys.create(name: "dpo", role: .admin)
                let deliveries = DeliveryRepository(database: runtime, dataKeys: TestDataKeys.provider)
                _ = try await deliveries.create(NewDelivery(reference: "ERASE-CLI-1", recipientName: "Rosa Private", address: "9 Hidden Way",
                                                            destination: nil), by: dispatcher.actor)
                _ = try await DeliveryClosing(deliveries: deliveries, lifecycle: LifecycleRepository(database: runtime, dataKeys: TestDataKeys.provider))
                    .close("ERASE-CLI-1", as: .cancelled, body: Array(#"{"reason":"customer asked"}"#.utf8), by: dispatcher.actor, at: Date(),
                           origin: AuditOrigin(actor: dispatcher.actor, credential: ActorCredential(token: dispatcherToken)))
                let dispatcherFile = folder.appendingPathComponent("dispatcher.token")
                let adminFile = folder.appendingPathComponent("admin.token")
                try Data((dispatcherToken + "\n").utf8).write(to: dispatcherFile)
                try Data((adminToken + "\n").utf8).write(to: adminFile)
                func erase(_ file: URL) async throws -> KeyCustodyTests.Run {
                    try await KeyCustodyTests.run(["erase", "ERASE-CLI-1", "--reason", "DSR-7", "--token-file", file.path,
                                                   "--database-url", scratch.url], in: folder)
                }

                let refused = try await erase(dispatcherFile)
                #expect(refused.status == 1 && refused.errors.contains("no live admin key"), "\(refused.output)\(refused.errors)")
                let erased = try await erase(adminFile)
                #expect(erased.status == 0 && erased.output.hasPrefix("erased ERASE-CLI-1 at "), "\(erased.output)\(erased.errors)")
                let again = try await erase(adminFile)
                #expect(again.status == 0 && again.output.contains("was erased already"), "\(again.output)\(again.errors)")
                let left = try await runtime.query("""
                    SELECT count(*) FROM deliveries WHERE recipient_name IS NOT NULL OR address IS NOT NULL OR close_reason IS NOT NULL
                    """).decode(Int.self, row: 0, column: 0)
                #expect(left == 0)

                let verified = try await KeyCustodyTests.run(["verify", "--database", "--database-url", scratch.url, "--trust-embedded-key"],
                                                             in: folder)
                #expect(verified.status == 0, "\(verified.output)\(verified.errors)")
                #expect(verified.output.contains("erased deliveries") && verified.output.contains("ERASE-CLI-1"), "\(verified.output)")
            } catch {
                await runtime.shutdown()
                throw error
            }
            await runtime.shutdown()
        }
    }
}
