import HTTPTypes
import Hummingbird
import Postgres

/// `GET /healthz` (the process is up) and `GET /readyz` (the database answers).
public struct HealthRoutes: Sendable {
    let database: PostgresClient
    let readinessTimeout: Duration

    /// Creates the routes; `/readyz` waits at most `readinessTimeout` for the database.
    public init(database: PostgresClient, readinessTimeout: Duration = .milliseconds(1500)) {
        self.database = database
        self.readinessTimeout = readinessTimeout
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<AppRequestContext>) {
        router.get("healthz") { _, _ in
            Self.json(.ok, #"{"status":"ok"}"#)
        }
        router.get("readyz") { _, _ in
            if await database.isReachable(timeout: readinessTimeout) {
                return Self.json(.ok, #"{"status":"ready","database":"ok"}"#)
            }
            var response = Self.json(.serviceUnavailable, #"{"status":"unavailable","database":"unreachable"}"#)
            response.headers[.retryAfterHeader] = "2"
            return response
        }
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
