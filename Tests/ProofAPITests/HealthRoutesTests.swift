import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import ProofAPI
import ProofService
import Testing
import TestSupport

@Suite("Health, readiness, errors and request ids")
struct HealthRoutesTests {
    private func app(databaseURL: String, database: PostgresClient? = nil) -> some ApplicationProtocol {
        let configuration = ServiceConfiguration(databaseURL: databaseURL)
        let database = database ?? PostgresClient(configuration: PostgresConfiguration(url: databaseURL, poolSize: 2))
        return CountersignApplication.make(configuration: configuration, database: database, logger: Logger(label: "test"))
    }

    @Test func healthzAnswersWithoutADatabase() async throws {
        try await app(databaseURL: "postgres://nobody@127.0.0.1:1/none").test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
            }
        }
    }

    @Test func readyzIs503WithRetryAfterWhenTheDatabaseIsUnreachable() async throws {
        try await app(databaseURL: "postgres://nobody@127.0.0.1:1/none").test(.router) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[HTTPField.Name("Retry-After")!] == "2")
            }
        }
    }

    @Test(.needsDatabase)
    func readyzIs200WhenTheDatabaseAnswers() async throws {
        // Connect first: under a loaded parallel run, opening a connection alone can exceed the
        // 1.5 s readiness budget, which is not what this test is about.
        let database = PostgresClient(configuration: .forTests(url: ScratchDatabase.baseURL!, poolSize: 2))
        _ = try await database.query("SELECT 1")
        try await app(databaseURL: ScratchDatabase.baseURL!, database: database).test(.router) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func unknownRoutesAreProblemJSONAndEchoTheRequestID() async throws {
        try await app(databaseURL: "postgres://nobody@127.0.0.1:1/none").test(.router) { client in
            try await client.execute(uri: "/no/such/thing", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "trace-42"]) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.headers[HTTPField.Name("X-Request-Id")!] == "trace-42")
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect(body?["status"] as? Int == 404)
                #expect(body?["code"] as? String == "not_found")
                #expect(body?["request_id"] as? String == "trace-42")
                #expect(body?["instance"] as? String == "/no/such/thing")
            }
        }
    }

    @Test func aHostileRequestIDIsReplaced() async throws {
        try await app(databaseURL: "postgres://nobody@127.0.0.1:1/none").test(.router) { client in
            let hostile = "x\"}\n{\"forged\":1" + String(repeating: "a", count: 200)
            try await client.execute(uri: "/healthz", method: .get, headers: [HTTPField.Name("X-Request-Id")!: hostile]) { response in
                let echoed = try #require(response.headers[HTTPField.Name("X-Request-Id")!])
                #expect(echoed != hostile)
                #expect(!echoed.isEmpty && echoed.count <= 128)
            }
        }
    }

    @Test func configurationComesFromTheEnvironmentAndRejectsNonsense() throws {
        let configuration = try ServiceConfiguration.fromEnvironment([
            "HOST": "0.0.0.0", "PORT": "9000", "DATABASE_URL": "postgres://a@b/c", "LOG_LEVEL": "DEBUG",
            "DB_POOL_SIZE": "4", "BODY_LIMIT": "65536", "MIGRATE_ON_START": "false",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.databaseURL == "postgres://a@b/c")
        #expect(configuration.logLevel == .debug)
        #expect(configuration.poolSize == 4)
        #expect(configuration.bodyLimit == 65536)
        #expect(configuration.migrateOnStart == false)
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.fromEnvironment(["PORT": "eighty"]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.fromEnvironment(["DB_POOL_SIZE": "0"]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.fromEnvironment(["LOG_LEVEL": "loud"]) }
    }
}
