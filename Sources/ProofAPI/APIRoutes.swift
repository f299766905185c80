import HTTPTypes
import Hummingbird
import Logging
import Postgres

/// The `/v1` API: deliveries, proofs, keys. (Grows with the proof-of-delivery issue.)
public struct APIRoutes: Sendable {
    let configuration: ServiceConfiguration
    let database: PostgresClient
    let logger: Logger

    /// Creates the routes over the database.
    public init(configuration: ServiceConfiguration, database: PostgresClient, logger: Logger) {
        self.configuration = configuration
        self.database = database
        self.logger = logger
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<AppRequestContext>) {
        _ = router.group("v1")
    }
}
