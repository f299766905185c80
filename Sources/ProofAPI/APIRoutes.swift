import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Postgres
import ProofService
import ProofStore

/// The `/v1` API: deliveries and their proofs, behind API-key authentication.
public struct APIRoutes: Sendable {
    let configuration: ServiceConfiguration
    let database: PostgresClient
    let logger: Logger
    let policy: APIPolicy
    let checkpointKeys: CheckpointKeyProvider
    let readDatabase: PostgresClient?
    /// The API-key cache, made live by the application's change listener
    /// (``CountersignApplication/make(configuration:database:logger:metrics:checkpointKeys:readDatabase:)``).
    var authenticationCache: AuthenticationCache?

    /// Creates the routes over the database; `policy` defaults to the configuration's (read from the environment),
    /// `checkpointKeys` to the key file the configuration names (or the one generated in its data directory);
    /// `readDatabase` (from `DATABASE_READ_URL`) serves delivery searches and audit listings/verification.
    public init(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                policy: APIPolicy? = nil, checkpointKeys: CheckpointKeyProvider? = nil,
                readDatabase: PostgresClient? = nil) {
        self.configuration = configuration
        self.database = database
        self.logger = logger
        self.policy = policy ?? configuration.policy
        self.checkpointKeys = checkpointKeys ?? CheckpointKeyProvider(configuration: configuration)
        self.readDatabase = readDatabase
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<AppRequestContext>) {
        // Without a cache from the application (and its listener), look-ups are never cached.
        let cache = authenticationCache ?? AuthenticationCache(timeToLive: .zero)
        let v1 = router.group("v1").add(middleware: BearerAuthMiddleware(keys: APIKeyRepository(database: database), cache: cache))
        if policy.rateLimitPerSecond > 0 {
            v1.add(middleware: RateLimitMiddleware(limiter: RateLimiter(ratePerSecond: policy.rateLimitPerSecond,
                                                                        burst: policy.rateLimitBurst)))
        }
        SessionRoutes().register(on: v1)
        DeliveryRoutes(deliveries: DeliveryRepository(database: database), searches: readDatabase.map { DeliveryRepository(database: $0) },
                       policy: policy).register(on: v1)
        ProofRoutes(database: database, policy: policy, bodyLimit: configuration.bodyLimit).register(on: v1)
        AuditRoutes(database: database, readDatabase: readDatabase, keys: checkpointKeys, policy: policy).register(on: v1)
        let specification = URL(fileURLWithPath: configuration.publicDirectory).appendingPathComponent("openapi.yaml")
        router.get("openapi.yaml") { _, _ in
            guard let bytes = try? Data(contentsOf: specification) else {
                throw Problem.notFound("The OpenAPI document is not installed (\(specification.path)).")
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
