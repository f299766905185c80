import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import ProofAPI
import ProofService
import Testing

@Suite("OpenAPI document")
struct OpenAPISpecTests {
    static let specification = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("public/openapi.yaml")

    /// `METHOD /path/{param}` for every operation in the YAML (paths at 2 spaces, methods at 4).
    static func documentedOperations() throws -> Set<String> {
        let text = try String(contentsOf: specification, encoding: .utf8)
        var operations: Set<String> = []
        var path: String?
        var inPaths = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") { inPaths = line == "paths:"; path = nil; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "patch", "delete"].contains(method) { operations.insert("\(method.uppercased()) \(path)") }
            }
        }
        return operations
    }

    @Test("every route has a spec entry and every spec entry a route")
    func specMatchesRoutes() async throws {
        let database = PostgresClient(configuration: PostgresConfiguration(url: "postgres://nobody@127.0.0.1:1/none", poolSize: 1))
        let router = CountersignApplication.router(configuration: ServiceConfiguration(), database: database,
                                                   logger: Logger(label: "test"))
        let routes = Set(router.routes.map { route -> String in
            let path = route.path.description.split(separator: "/").map { part in
                part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
            }.joined(separator: "/")
            return "\(route.method.rawValue) /\(path)"
        })
        let documented = try Self.documentedOperations()
        #expect(routes.subtracting(documented).isEmpty, "routes without a spec entry: \(routes.subtracting(documented).sorted())")
        #expect(documented.subtracting(routes).isEmpty, "spec entries without a route: \(documented.subtracting(routes).sorted())")
        #expect(documented.count >= 10)
        await database.shutdown()
    }

    @Test("GET /openapi.yaml serves the document")
    func served() async throws {
        let database = PostgresClient(configuration: PostgresConfiguration(url: "postgres://nobody@127.0.0.1:1/none", poolSize: 1))
        var configuration = ServiceConfiguration()
        configuration.publicDirectory = Self.specification.deletingLastPathComponent().path
        let app = Application(router: CountersignApplication.router(configuration: configuration, database: database,
                                                                    logger: Logger(label: "test")))
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).hasPrefix("openapi: 3.1.0"))
        }
        await database.shutdown()
    }
}
