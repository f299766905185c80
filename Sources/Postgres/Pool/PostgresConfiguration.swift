/// How a `PostgresClient` connects and how large its pool is.
public struct PostgresConfiguration: Sendable {
    /// libpq connection URL (`postgres://user:pass@host:port/db`, unix sockets via a `/dir` host).
    public var url: String
    /// Maximum number of open connections; the blocking thread pool has the same size.
    public var poolSize: Int
    /// How long a caller waits for a free connection before `PostgresError.Kind.poolTimeout`.
    public var acquireTimeout: Duration
    /// Seconds libpq may spend establishing one connection.
    public var connectTimeoutSeconds: Int
    /// Shown as `application_name` on the server.
    public var applicationName: String

    /// Creates a configuration; the defaults suit a single service replica.
    public init(url: String, poolSize: Int = 10, acquireTimeout: Duration = .seconds(5),
                connectTimeoutSeconds: Int = 3, applicationName: String = "countersign") {
        self.url = url
        self.poolSize = max(1, poolSize)
        self.acquireTimeout = acquireTimeout
        self.connectTimeoutSeconds = max(1, connectTimeoutSeconds)
        self.applicationName = applicationName
    }
}
