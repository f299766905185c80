import ArgumentParser
import Foundation
import Logging
import Postgres
import ProofService
import ProofStore

/// `countersign keys create|list|revoke`: manage API keys. The token is printed once, at creation;
/// the database keeps only its SHA-256.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke API keys.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    /// Options shared by the subcommands.
    struct DatabaseOptions: ParsableArguments {
        @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?

        /// Runs `body` with a one-connection client, closing it afterwards.
        func withKeys<T: Sendable>(_ body: (APIKeyRepository) async throws -> T) async throws -> T {
            let environment = try ServiceConfiguration.fromEnvironment()
            let database = PostgresClient(configuration: .forCommand(url: databaseURL ?? environment.databaseURL))
            do {
                let value = try await body(APIKeyRepository(database: database))
                await database.shutdown()
                return value
            } catch {
                await database.shutdown()
                throw error
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key and print its token (shown only this once).")

        @Option(help: "courier, dispatcher, auditor or admin.") var role: String
        @Option(help: "Human name of the key, e.g. \"van 12 handheld\".") var name: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let role = Role(rawValue: role.lowercased()) else {
                throw ValidationError("--role must be one of courier, dispatcher, auditor, admin")
            }
            let (key, token) = try await database.withKeys { try await $0.create(name: name, role: role) }
            FileHandle.standardError.write(Data("created \(key.role.rawValue) key \(key.id.uuidString.lowercased()) (\(key.name)); the token is shown only once:\n".utf8))
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (never their tokens).")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let keys = try await database.withKeys { try await $0.list() }
            let formatter = Date.ISO8601FormatStyle()
            print(["ID", "ROLE", "CREATED", "REVOKED", "NAME"].joined(separator: "\t"))
            for key in keys {
                print([key.id.uuidString.lowercased(), key.role.rawValue, key.createdAt.formatted(formatter),
                       key.revokedAt.map { $0.formatted(formatter) } ?? "-", key.name].joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: requests with it get 401 from now on.")

        @Argument(help: "The key's id (from `keys list`).") var id: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not a key id (a UUID)") }
            guard try await database.withKeys({ try await $0.revoke(id: uuid) }) else {
                FileHandle.standardError.write(Data("countersign keys revoke: no key \(id)\n".utf8))
                throw ExitCode(1)
            }
            print("revoked \(uuid.uuidString.lowercased())")
        }
    }
}
