import HTTPTypes
import Hummingbird
import Logging
import Postgres
import ProofStore

/// The `/v1` API: deliveries and their proofs, behind API-key authentication.
public struct APIRoutes: Sendable {
    let configuration: ServiceConfiguration
    let database: PostgresClient
    let logger: Logger
    let policy: APIPolicy

    /// Creates the routes over the database; `policy` defaults to the environment's (`GEOFENCE_RADIUS_M`).
    public init(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger,
                policy: APIPolicy = .fromEnvironment()) {
        self.configuration = configuration
        self.database = database
        self.logger = logger
        self.policy = policy
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<AppRequestContext>) {
        let v1 = router.group("v1").add(middleware: BearerAuthMiddleware(keys: APIKeyRepository(database: database)))
        DeliveryRoutes(deliveries: DeliveryRepository(database: database), policy: policy).register(on: v1)
        ProofRoutes(database: database, policy: policy, bodyLimit: configuration.bodyLimit).register(on: v1)
    }
}
