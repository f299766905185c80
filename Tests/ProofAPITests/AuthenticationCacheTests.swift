import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import ProofAPI
import ProofService
import ProofStore
import TestSupport
import Testing

@Suite("API-key cache", .needsDatabase)
struct AuthenticationCacheTests {
    static let courier = Actor(keyID: UUID(), name: "c", role: .courier)

    @Test("entries are served only while live, and a look-up begun before an invalidation is not remembered")
    func generations() {
        let cache = AuthenticationCache(timeToLive: .seconds(300))
        let hash = [UInt8](repeating: 7, count: 32)
        cache.remember(Self.courier, forTokenHash: hash, generation: cache.generation)
        #expect(cache.actor(forTokenHash: hash) == nil, "not live yet: nothing is kept")

        cache.invalidate(live: true)
        cache.remember(Self.courier, forTokenHash: hash, generation: cache.generation)
        #expect(cache.actor(forTokenHash: hash) == Self.courier)

        // A look-up reads the generation, then a revocation's notification arrives, then it finishes.
        let before = cache.generation
        cache.invalidate(live: true)
        #expect(cache.actor(forTokenHash: hash) == nil, "the notification emptied the cache")
        cache.remember(Self.courier, forTokenHash: hash, generation: before)
        #expect(cache.actor(forTokenHash: hash) == nil, "a result read before the revocation must not be cached")

        cache.invalidate(live: false)
        cache.remember(Self.courier, forTokenHash: hash, generation: cache.generation)
        #expect(cache.actor(forTokenHash: hash) == nil, "a lost listener turns the cache off")
    }

    @Test("a revoked key is refused as soon as the notification arrives, not after the time to live; a lost listener turns the cache off")
    func revocationReachesTheCache() async throws {
        try await APITestHarness.with { harness in
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let cache = AuthenticationCache(timeToLive: .seconds(300))
            let listener = CountersignApplication.keyChangeListener(url: harness.scratch.url, cache: cache, logger: logger)
            let listening = Task { try await listener.run() }
            defer { listening.cancel() }
            try await Self.waitUntil { cache.isLive }

            let router = Router(context: AppRequestContext.self)
            router.add(middleware: ProblemMiddleware())
            var api = APIRoutes(configuration: ServiceConfiguration(databaseURL: harness.scratch.url), database: harness.database,
                                logger: logger, policy: APIPolicy(rateLimitPerSecond: 0),
                                checkpointKeys: CheckpointKeyProvider(key: harness.checkpointKey), dataKeys: TestDataKeys.provider)
            api.authenticationCache = cache
            api.register(on: router)
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            let token = harness.tokens[.courier]!
            let tokenHash = APIKeyRepository.hash(token)

            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.courier)) { response in
                    #expect(response.status == .ok)
                }
                #expect(cache.actor(forTokenHash: tokenHash)?.role == .courier, "the look-up is cached")

                try await APIKeyRepository(database: harness.database).revoke(id: harness.actors[.courier]!.keyID)
                // Long before the time to live (five minutes) the next request is refused: the
                // notification arrives in milliseconds; two minutes leave room for a test run whose
                // two cooperative threads are busy with other suites' synchronous work for a while.
                let deadline = ContinuousClock.now + .seconds(120)
                var status = HTTPResponse.Status.ok
                while status == .ok && ContinuousClock.now < deadline {
                    status = try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.courier)) { $0.status }
                    if status == .ok { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(status == .unauthorized)

                // Another key is cached again; then the listener's connection dies: nothing is served from memory.
                try await client.execute(uri: "/v1/session", method: .get, headers: harness.headers(.dispatcher)) { response in
                    #expect(response.status == .ok)
                }
                #expect(cache.actor(forTokenHash: APIKeyRepository.hash(harness.tokens[.dispatcher]!)) != nil)
                try await harness.database.query("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'countersign-listener' AND datname = current_database()
                    """)
                try await Self.waitUntil { !cache.isLive }
                #expect(cache.actor(forTokenHash: APIKeyRepository.hash(harness.tokens[.dispatcher]!)) == nil)
                try await Self.waitUntil { cache.isLive }  // reconnected
            }
        }
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(240)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not reached within 240 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
