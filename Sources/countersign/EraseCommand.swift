import ArgumentParser
import Foundation
import Postgres
import ProofService
import ProofStore

/// `countersign erase REFERENCE --reason R --token-file F`: what `POST /v1/deliveries/{reference}/erase`
/// does, for an operator without the API at hand. The database acts only as the live admin key
/// whose token the file holds (migration 0026), so the command's database URL alone erases nothing.
struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase one delivery's personal data (docs/data-protection.md §4): its data key destroyed, its names, places, notes, image and points removed.")

    @Argument(help: "The delivery's reference.") var reference: String
    @Option(help: "Why (1-200 characters; kept in the audit chain for good: a case number, not a name).") var reason: String
    @Option(name: .customLong("token-file"), help: "A file holding the token of a live admin key (the erasure acts as that key).")
    var tokenFile: String
    @OptionGroup var database: KeysCommand.DatabaseOptions

    func run() async throws {
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let body = try JSONSerialization.data(withJSONObject: ["reason": reason])
        let environment = try ServiceConfiguration.fromEnvironment()
        let client = PostgresClient(configuration: .forCommand(url: database.databaseURL ?? environment.databaseURL))
        do {
            guard let actor = try await APIKeyRepository(database: client).authenticate(token: token), actor.role == .admin else {
                throw ServiceError(.forbidden, code: "forbidden", detail: "The token of \(tokenFile) is no live admin key.")
            }
            let erasure = DeliveryErasure(deliveries: DeliveryRepository(database: client), erasures: ErasureRepository(database: client), reader: nil)
            let result = try await erasure.erase(reference, body: Array(body), by: actor,
                                                 origin: AuditOrigin(actor: actor, credential: ActorCredential(token: token)))
            let at = result.delivery.erasedAt.map(RFC3339Timestamp.format) ?? "?"
            print(result.alreadyErased ? "\(reference) was erased already, at \(at)" : "erased \(reference) at \(at)")
            await client.shutdown()
        } catch {
            await client.shutdown()
            guard let refused = error as? ServiceError else { throw error }
            FileHandle.standardError.write(Data("countersign erase: \(refused.detail)\n".utf8))
            throw ExitCode(1)
        }
    }
}
