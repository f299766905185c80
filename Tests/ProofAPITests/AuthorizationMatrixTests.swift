import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport

/// Every route × every credential, expecting exactly the status `docs/api.md` documents.
///
/// The table is the single place to extend when a route lands: add one ``Route`` row with the
/// roles that may call it. Each row is tried with no key, a malformed header, an unknown token, a
/// revoked key (of a role that would be allowed), and a live key of every role; the expected
/// status follows from the row alone (public routes: the success status for everyone; others:
/// 401 without a usable key, the success status for a granted role, 403 for any other role's key).
/// A refused write must leave no trace.
@Suite("Authorisation matrix", .needsDatabase)
struct AuthorizationMatrixTests {
    /// What a request needs that must be fresh per attempt.
    enum Body: Sendable {
        case none
        /// A new delivery with a unique reference.
        case newDelivery
        /// A proof for a fresh pending delivery (substituted for `{pending}`).
        case proof
        /// A failed attempt.
        case attempt
        /// A reason to cancel or give up.
        case reason
    }

    /// One row of the matrix.
    struct Route: Sendable, CustomStringConvertible {
        var method: HTTPRequest.Method
        /// `{delivered}`: a delivery with a proof; `{pending}`: a fresh delivery without one.
        var path: String
        /// Roles granted the route; `nil` for a public route (no key needed).
        var allowed: Set<Role>?
        var success: HTTPResponse.Status
        var body: Body = .none

        var description: String { "\(method) \(path)" }
    }

    static let everyone = Set(Role.allCases)

    /// The documented role table (docs/api.md, "Authentication and roles") plus the public routes.
    static let routes: [Route] = [
        Route(method: .get, path: "/healthz", allowed: nil, success: .ok),
        Route(method: .get, path: "/readyz", allowed: nil, success: .ok),
        Route(method: .get, path: "/openapi.yaml", allowed: nil, success: .ok),
        Route(method: .get, path: "/metrics", allowed: nil, success: .ok),
        Route(method: .post, path: "/v1/deliveries", allowed: [.dispatcher, .admin], success: .created, body: .newDelivery),
        Route(method: .get, path: "/v1/deliveries", allowed: everyone, success: .ok),
        Route(method: .get, path: "/v1/deliveries?status=delivered&limit=5", allowed: everyone, success: .ok),
        Route(method: .get, path: "/v1/deliveries/{delivered}", allowed: everyone, success: .ok),
        Route(method: .post, path: "/v1/deliveries/{pending}/proof", allowed: [.courier, .dispatcher, .admin], success: .created,
              body: .proof),
        Route(method: .post, path: "/v1/deliveries/{pending}/attempts", allowed: [.courier, .dispatcher, .admin], success: .created,
              body: .attempt),
        Route(method: .post, path: "/v1/deliveries/{pending}/cancel", allowed: [.dispatcher, .admin], success: .ok, body: .reason),
        Route(method: .post, path: "/v1/deliveries/{pending}/fail", allowed: [.dispatcher, .admin], success: .ok, body: .reason),
        // On a pending delivery, so that the matrix erases nothing: the admin passes the permission
        // and meets 409 delivery_pending (ErasureTests erases for real).
        Route(method: .post, path: "/v1/deliveries/{pending}/erase", allowed: [.admin], success: .conflict, body: .reason),
        Route(method: .put, path: "/v1/deliveries/{delivered}/legal-hold", allowed: [.auditor, .admin], success: .ok, body: .reason),
        Route(method: .get, path: "/v1/deliveries/{delivered}/legal-hold", allowed: [.auditor, .admin], success: .ok),
        Route(method: .delete, path: "/v1/deliveries/{delivered}/legal-hold", allowed: [.auditor, .admin], success: .noContent),
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof", allowed: [.dispatcher, .auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof/signature.png", allowed: [.dispatcher, .auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof/signature.png?width=120", allowed: [.dispatcher, .auditor, .admin],
              success: .ok),
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof/signature.svg", allowed: [.dispatcher, .auditor, .admin], success: .ok),
        // The raw dynamics are biometric data: auditors and admins only (dispatchers see the image).
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof/points", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/deliveries/{delivered}/proof/points?format=inkml", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/audit/events", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/audit/verify", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/audit/checkpoint", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/audit/checkpoints", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/exports/proofs", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/exports/proofs?format=ndjson", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/exports/proofs?format=csv&since=2020-01-01T00:00:00Z", allowed: [.auditor, .admin], success: .ok),
        Route(method: .get, path: "/v1/webhooks", allowed: [.admin], success: .ok),
        Route(method: .get, path: "/v1/devices", allowed: everyone, success: .ok),
    ]

    /// A credential to present.
    enum Credential: Sendable, CustomStringConvertible {
        case none
        case malformed
        case unknown
        case revoked
        case role(Role)

        var description: String {
            switch self {
            case .none: "no key"
            case .malformed: "malformed header"
            case .unknown: "unknown key"
            case .revoked: "revoked key"
            case .role(let role): "\(role.rawValue) key"
            }
        }

        static let all: [Credential] = [.none, .malformed, .unknown, .revoked] + Role.allCases.map { .role($0) }
    }

    /// The documented answer for `credential` on `route`.
    static func expected(_ route: Route, _ credential: Credential) -> HTTPResponse.Status {
        guard let allowed = route.allowed else { return route.success }
        switch credential {
        case .none, .malformed, .unknown, .revoked: return .unauthorized
        case .role(let role): return allowed.contains(role) ? route.success : .forbidden
        }
    }

    /// The repository's `public/` folder (for `/openapi.yaml`).
    static let publicDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("public").path

    @Test("every route × {no key, malformed, unknown, revoked, each role} gets exactly the documented status")
    func matrix() async throws {
        try await APITestHarness.with { harness in
            // A revoked key of the most powerful role: revocation must beat any grant.
            let keys = APIKeyRepository(database: harness.database)
            let revoked = try await keys.create(name: "revoked admin", role: .admin)
            #expect(try await keys.revoke(id: revoked.key.id))

            var logger = Logger(label: "test")
            logger.logLevel = .critical
            // The checkpoint key is generated (explicitly allowed, as in development) into a folder of this test's own.
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("authz-\(UInt32.random(in: 0...UInt32.max))")
            defer { try? FileManager.default.removeItem(at: data) }
            var configuration = ServiceConfiguration(databaseURL: harness.scratch.url, bodyLimit: 1 << 20,
                                                     publicDirectory: Self.publicDirectory, dataDirectory: data.path,
                                                     generateCheckpointKey: true)
            configuration.webhooks.secretsKey = String(repeating: "ab", count: 32)  // webhooks on, so admins get 200
            let router = CountersignApplication.router(configuration: configuration, database: harness.database, logger: logger,
                                                       dataKeys: TestDataKeys.provider)
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(.router) { client in
                let delivered = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(delivered)/proof", method: .post,
                                                      headers: harness.headers(.admin), body: ByteBuffer(string: Samples.proofJSON()))
                try #require(upload.status == .created)

                var tried = 0
                for route in Self.routes {
                    for credential in Self.all(credentialsFor: route) {
                        var headers: HTTPFields = [.contentType: "application/json"]
                        switch credential {
                        case .none: break
                        case .malformed: headers[.authorization] = "Bearer"
                        case .unknown: headers[.authorization] = "Bearer cs_0000000000000000000000000000000000000000000"
                        case .revoked: headers[.authorization] = "Bearer \(revoked.token)"
                        case .role(let role): headers[.authorization] = "Bearer \(harness.tokens[role]!)"
                        }
                        var path = route.path.replacingOccurrences(of: "{delivered}", with: delivered)
                        var pending: String?
                        if path.contains("{pending}") {
                            let reference = try await harness.createDelivery(client)
                            pending = reference
                            path = path.replacingOccurrences(of: "{pending}", with: reference)
                        }
                        var body: ByteBuffer?
                        var newReference: String?
                        switch route.body {
                        case .none: break
                        case .newDelivery:
                            let reference = "AUTHZ-\(UInt32.random(in: 0...UInt32.max))"
                            newReference = reference
                            body = ByteBuffer(string: Samples.deliveryJSON(reference: reference))
                        case .proof: body = ByteBuffer(string: Samples.proofJSON())
                        case .attempt: body = ByteBuffer(string: DeliveryLifecycleTests.attemptJSON())
                        case .reason: body = ByteBuffer(string: #"{"reason":"authorisation matrix"}"#)
                        }

                        let response = try await client.execute(uri: path, method: route.method, headers: headers, body: body)
                        let want = Self.expected(route, credential)
                        tried += 1
                        #expect(response.status == want, "\(route) with \(credential): \(response.status), expected \(want)")
                        if want == .unauthorized {
                            #expect(response.problemCode == "unauthorized", "\(route) with \(credential)")
                            #expect(response.headers[.wwwAuthenticate] == "Bearer", "\(route) with \(credential)")
                        } else if want == .forbidden {
                            #expect(response.problemCode == "forbidden", "\(route) with \(credential)")
                        }
                        // A refused write leaves nothing behind.
                        if want.code >= 400 {
                            if let newReference {
                                let lookup = try await client.execute(uri: "/v1/deliveries/\(newReference)", method: .get,
                                                                      headers: harness.headers(.admin))
                                #expect(lookup.status == .notFound, "\(route) with \(credential) created \(newReference)")
                            }
                            if let pending {
                                let lookup = try await client.execute(uri: "/v1/deliveries/\(pending)", method: .get,
                                                                      headers: harness.headers(.admin))
                                #expect(lookup.json["status"] as? String == "pending", "\(route) with \(credential) recorded a proof or closed it")
                                #expect((lookup.json["attempts"] as? [Any])?.isEmpty == true, "\(route) with \(credential) recorded an attempt")
                            }
                        }
                    }
                }
                #expect(tried == Self.routes.count * Credential.all.count)

                // Refusals are not audited as reads: only the granted roles' content reads are in the log.
                let events = try await client.execute(uri: "/v1/audit/events?action=proof_png_read&limit=500", method: .get,
                                                      headers: harness.headers(.auditor))
                let items = events.json["items"] as? [[String: Any]] ?? []
                let pngRoutes = Self.routes.filter { $0.path.contains("signature.png") }.count
                #expect(items.count == pngRoutes * 3, "one proof_png_read per granted PNG read")
            }
        }
    }

    /// Every credential, for every route (kept as a function so a route could narrow it later).
    static func all(credentialsFor route: Route) -> [Credential] { Credential.all }

    @Test("the matrix agrees with the role table in docs/api.md")
    func tableMatchesDocumentation() throws {
        let docs = URL(fileURLWithPath: Self.publicDirectory).deletingLastPathComponent().appendingPathComponent("docs/api.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        // Each documented row: "| `METHOD /path`, … | ✔ | – | … |" with columns courier, dispatcher, auditor, admin.
        var documented = 0
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5 else { continue }
            let grants = zip([Role.courier, .dispatcher, .auditor, .admin], cells[1...4]).filter { $0.1 == "✔" }.map(\.0)
            let operations = cells[0].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            for operation in operations {
                let parts = operation.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, let method = HTTPRequest.Method(String(parts[0])) else { continue }
                let documentedPath = String(parts[1]).replacingOccurrences(of: "[/…]", with: "")
                let matching = Self.routes.filter { route in
                    route.method == method && Self.template(route.path) == Self.template(documentedPath)
                }
                #expect(!matching.isEmpty, "documented \(operation) has no row in the matrix")
                for route in matching {
                    #expect(route.allowed == Set(grants), "\(route): matrix \(route.allowed ?? []) vs docs \(grants)")
                }
                documented += 1
            }
        }
        #expect(documented >= 7, "the role table was not found in docs/api.md")
    }

    /// A path with its query removed and every delivery placeholder written as `{reference}`.
    static func template(_ path: String) -> String {
        let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        return bare.replacingOccurrences(of: "{delivered}", with: "{reference}").replacingOccurrences(of: "{pending}", with: "{reference}")
    }
}
