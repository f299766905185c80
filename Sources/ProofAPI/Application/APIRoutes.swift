import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Postgres
import ProofService
import ProofStore

/// The `/v1` API: deliveries and their proofs, behind API-key authentication.
public struct APIRoutes: Sendable {
    let services: CountersignServices
    let bodyLimit: Int
    let publicDirectory: String
    /// The API-key cache, made live by the application's change listener
    /// (``CountersignApplication/make(configuration:database:logger:metrics:checkpointKeys:readDatabase:services:)``).
    var authenticationCache: AuthenticationCache?

    /// Creates the routes over `services`; `bodyLimit` and `publicDirectory` come from the configuration.
    public init(services: CountersignServices, configuration: ServiceConfiguration) {
        self.services = services
        self.bodyLimit = configuration.bodyLimit
        self.publicDirectory = configuration.publicDirectory
    }

    /// Creates the routes and their services over the database; `policy` defaults to the
    /// configuration's (read from the environment), `checkpointKeys` to the key file the
    /// configuration names (or, when it allows generation, the one in its data directory; else none:
    /// checkpoints and exports answer 503 `checkpoint_key_unavailable`); `readDatabase` (from
    /// `DATABASE_READ_URL`) serves delivery searches and audit listings/verification; `dataKeys`
    /// defaults to the configuration's (`DATA_KEY_FILE`; without any, uploads and proof reads
    /// answer 503 `data_key_unavailable`, and `serve` refuses to start).
    public init(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                policy: APIPolicy? = nil, checkpointKeys: CheckpointKeyProvider? = nil, dataKeys: DataKeyProvider? = nil,
                readDatabase: PostgresClient? = nil, metrics: (any ServiceMetrics)? = nil) {
        let services = CountersignServices(policy: policy ?? configuration.policy, database: database, readDatabase: readDatabase,
                                           checkpointKeys: checkpointKeys ?? CheckpointKeyProvider(configuration: configuration),
                                           dataKeys: dataKeys ?? DataKeyProvider(configuration: configuration),
                                           metrics: metrics, webhooks: configuration.webhooks)
        self.init(services: services, configuration: configuration)
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<AppRequestContext>) {
        // Without a cache from the application (and its listener), look-ups are never cached.
        let cache = authenticationCache ?? AuthenticationCache(timeToLive: .zero)
        let policy = services.policy
        let failures = AuthenticationFailureGuard(ratePerSecond: policy.authenticationFailureRatePerSecond,
                                                  burst: policy.authenticationFailureBurst)
        let v1 = router.group("v1").add(middleware: BearerAuthMiddleware(keys: services.keys, cache: cache, failures: failures))
        if policy.rateLimitPerSecond > 0 {
            v1.add(middleware: RateLimitMiddleware(limiter: RateLimiter(ratePerSecond: policy.rateLimitPerSecond,
                                                                        burst: policy.rateLimitBurst)))
        }
        SessionRoutes().register(on: v1)
        DeliveryRoutes(services: services).register(on: v1)
        ProofRoutes(intake: services.intake, reader: services.reader, idempotency: IdempotencyGate(records: services.idempotency),
                    bodyLimit: bodyLimit).register(on: v1)
        DeliveryLifecycleRoutes(attempts: services.attempts, closing: services.closing,
                                idempotency: IdempotencyGate(records: services.idempotency)).register(on: v1)
        DeliveryErasureRoutes(erasure: services.erasure).register(on: v1)
        AuditRoutes(services: services).register(on: v1)
        WebhookRoutes(webhooks: services.webhooks, policy: policy).register(on: v1)
        DeviceRoutes(devices: services.devices).register(on: v1)
        let specification = URL(fileURLWithPath: publicDirectory).appendingPathComponent("openapi.yaml")
        router.get("openapi.yaml") { _, _ in
            guard let bytes = try? Data(contentsOf: specification) else {
                throw Problem.notFound("The OpenAPI document is not installed (\(specification.path)).")
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
