import Foundation
import Logging
import Webhooks
import ProofStore

/// Everything `countersign serve` is configured with. Each field has an environment variable
/// (listed in the README) and a command-line flag; flags win over the environment.
public struct ServiceConfiguration: Sendable {
    /// Interface to bind (`HOST`, default 127.0.0.1).
    public var host: String
    /// TCP port (`PORT`, default 8080).
    public var port: Int
    /// libpq URL of the database (`DATABASE_URL`).
    public var databaseURL: String
    /// libpq URL of a read-only replica for delivery searches and audit listings/verification
    /// (`DATABASE_READ_URL`, optional; everything else, and every write, uses `databaseURL`).
    public var databaseReadURL: String?
    /// Log level (`LOG_LEVEL`: trace, debug, info, notice, warning, error, critical; default info).
    public var logLevel: Logger.Level
    /// Database connections, and threads for blocking libpq calls (`DB_POOL_SIZE`, default 10).
    public var poolSize: Int
    /// Largest accepted request body in bytes (`BODY_LIMIT`, default 1 MiB).
    public var bodyLimit: Int
    /// Apply pending migrations before serving (`MIGRATE_ON_START`, default true). Only a
    /// privileged role can (see `allowPrivilegedDatabaseRole`); the runtime role cannot, and serve
    /// refuses to start while a migration is pending, naming `countersign migrate`.
    public var migrateOnStart: Bool
    /// Serve even when the database role could rewrite evidence: a superuser, an owner of the
    /// tables, table-wide UPDATE/DELETE/TRUNCATE (`ALLOW_PRIVILEGED_DATABASE_ROLE`, default false:
    /// development only). Off, serve refuses such a role with one line naming the fix.
    public var allowPrivilegedDatabaseRole = false
    /// Folder of numbered SQL migrations (`MIGRATIONS_DIR`).
    public var migrationsDirectory: String?
    /// Folder of the web console (`PUBLIC_DIR`, default ./public).
    public var publicDirectory: String
    /// Seconds a connection may stay silent — idle, or part-way through sending a request — before
    /// it is closed (`IDLE_TIMEOUT_SECONDS`, default 30).
    public var idleTimeoutSeconds: Int
    /// Seconds a client has to send a request's body once its head arrived; a slower one is cut
    /// off (`REQUEST_TIMEOUT_SECONDS`, default 60).
    public var requestTimeoutSeconds = 60
    /// Seconds a response may sit unsent because the client stopped reading (the connection's
    /// buffer full) before the connection is closed (`WRITE_TIMEOUT_SECONDS`, default 30): a stalled
    /// export gives back its slot and snapshot.
    public var writeTimeoutSeconds = 30
    /// `Strict-Transport-Security` max-age for a service reached over TLS (`HSTS_MAX_AGE_SECONDS`,
    /// default 0: no header, as the service itself speaks plain HTTP behind a proxy).
    public var hstsMaxAgeSeconds = 0
    /// Folder for state the service makes itself: the checkpoint key generated under
    /// `generateCheckpointKey` (`DATA_DIR`, default ./.data).
    public var dataDirectory: String
    /// PKCS#8 PEM Ed25519 key signing audit checkpoints and export manifests (`CHECKPOINT_KEY_FILE`):
    /// the production way. Give every replica the same file.
    public var checkpointKeyFile: String?
    /// Without `checkpointKeyFile`, use `<dataDirectory>/checkpoint-ed25519.pem`, generating it when
    /// missing (`CHECKPOINT_KEY_GENERATE=true` or `serve --generate-checkpoint-key`; default false:
    /// development only, `make run` sets it). Neither set: `serve` refuses to start.
    public var generateCheckpointKey: Bool
    /// The key-encryption keys that wrap every delivery's data key (`DATA_KEY_FILE`: lines of
    /// `<id> <base64 32 bytes>`, the last one wrapping new keys; docs/data-protection.md). Give
    /// every replica the same file; keep a rotated-out key while data it wrapped is stored.
    public var dataKeyFile: String?
    /// Without `dataKeyFile`, use `<dataDirectory>/data-keys`, generating it when missing
    /// (`DATA_KEY_GENERATE=true`; default false: development only, `make run` sets it). Neither
    /// set: `serve` refuses to start — personal data is never stored in clear instead.
    public var generateDataKey = false
    /// The retention policy `countersign migrate` stores (`RETENTION_DAYS`: days after a
    /// delivery's creation, 1–36500, or `none`; unset: the stored policy stays as it is).
    public var retentionPolicy: RetentionPolicy?
    /// Seconds between this replica's retention runs (`RETENTION_INTERVAL_SECONDS`, default 3600;
    /// 0: this replica runs none). The runs erase only what the database's policy makes due.
    public var retentionIntervalSeconds = 3_600
    /// Seconds between scheduled checkpoints, signed only when a chain moved
    /// (`CHECKPOINT_INTERVAL_SECONDS`, default 60; 0 turns the schedule off).
    public var checkpointIntervalSeconds = 60
    /// The append-only directory every scheduled checkpoint is written to (`CHECKPOINT_WITNESS_DIR`,
    /// optional; docs/audit.md, "Witnessed checkpoints").
    public var checkpointWitnessDirectory: String?
    /// HTTP receivers each scheduled checkpoint's JSON is POSTed to (`CHECKPOINT_WITNESS_URLS`,
    /// comma-separated http(s) URLs; optional).
    public var checkpointWitnessURLs: [String] = []
    /// An RFC 3161 timestamp authority stamping each scheduled checkpoint (`CHECKPOINT_TSA_URL`,
    /// optional; needs `CHECKPOINT_WITNESS_DIR`, where the token is kept beside the checkpoint).
    public var checkpointTSAURL: String?
    /// The `/v1` API's tunables (`GEOFENCE_RADIUS_M`, `AUTH_CACHE_SECONDS`, `RATE_LIMIT_*`, `PNG_CACHE_MB`).
    public var policy = APIPolicy()
    /// Webhooks: `WEBHOOK_SECRETS_KEY`, `WEBHOOK_ALLOW_PRIVATE_NETWORKS`, `WEBHOOK_TIMEOUT_SECONDS`… (docs/webhooks.md).
    public var webhooks = WebhookSettings()

    /// The default local development database made by `make run`, as its runtime role.
    public static let defaultDatabaseURL = "postgres://countersign_app@127.0.0.1:5544/countersign"

    /// Creates a configuration.
    public init(host: String = "127.0.0.1", port: Int = 8080, databaseURL: String = ServiceConfiguration.defaultDatabaseURL,
                logLevel: Logger.Level = .info, poolSize: Int = 10, bodyLimit: Int = 1 << 20,
                migrateOnStart: Bool = true, migrationsDirectory: String? = nil, publicDirectory: String = "public",
                dataDirectory: String = ".data", checkpointKeyFile: String? = nil, generateCheckpointKey: Bool = false,
                idleTimeoutSeconds: Int = 30) {
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.logLevel = logLevel
        self.poolSize = poolSize
        self.bodyLimit = bodyLimit
        self.migrateOnStart = migrateOnStart
        self.migrationsDirectory = migrationsDirectory
        self.publicDirectory = publicDirectory
        self.dataDirectory = dataDirectory
        self.checkpointKeyFile = checkpointKeyFile
        self.generateCheckpointKey = generateCheckpointKey
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }

    /// Reads the environment; an unparsable value is an error naming the variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ServiceConfiguration {
        var configuration = ServiceConfiguration()
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let raw = value(name) else { return nil }
            guard let number = Int(raw), range.contains(number) else {
                throw ConfigurationError(variable: name, value: raw, expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        func boolean(_ name: String) throws -> Bool? {
            guard let flag = value(name) else { return nil }
            switch flag.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw ConfigurationError(variable: name, value: flag, expected: "true or false")
            }
        }
        if let host = value("HOST") { configuration.host = host }
        if let port = try integer("PORT", in: 0...65535) { configuration.port = port }
        if let url = value("DATABASE_URL") { configuration.databaseURL = url }
        if let url = value("DATABASE_READ_URL") { configuration.databaseReadURL = url }
        if let level = value("LOG_LEVEL") {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ConfigurationError(variable: "LOG_LEVEL", value: level, expected: "trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = parsed
        }
        if let size = try integer("DB_POOL_SIZE", in: 1...500) { configuration.poolSize = size }
        if let limit = try integer("BODY_LIMIT", in: 1024...(256 << 20)) { configuration.bodyLimit = limit }
        if let migrate = try boolean("MIGRATE_ON_START") { configuration.migrateOnStart = migrate }
        if let allow = try boolean("ALLOW_PRIVILEGED_DATABASE_ROLE") { configuration.allowPrivilegedDatabaseRole = allow }
        if let directory = value("MIGRATIONS_DIR") { configuration.migrationsDirectory = directory }
        if let directory = value("PUBLIC_DIR") { configuration.publicDirectory = directory }
        if let directory = value("DATA_DIR") { configuration.dataDirectory = directory }
        if let file = value("CHECKPOINT_KEY_FILE") { configuration.checkpointKeyFile = file }
        if let generate = try boolean("CHECKPOINT_KEY_GENERATE") { configuration.generateCheckpointKey = generate }
        if let file = value("DATA_KEY_FILE") { configuration.dataKeyFile = file }
        if let generate = try boolean("DATA_KEY_GENERATE") { configuration.generateDataKey = generate }
        if let seconds = try integer("CHECKPOINT_INTERVAL_SECONDS", in: 0...86_400) { configuration.checkpointIntervalSeconds = seconds }
        if let raw = value("RETENTION_DAYS") {
            if raw.lowercased() == "none" {
                configuration.retentionPolicy = .forever
            } else {
                let range = RetentionPolicy.allowedDays
                guard let days = Int(raw), range.contains(days) else {
                    throw ConfigurationError(variable: "RETENTION_DAYS", value: raw,
                                             expected: "a number of days in \(range.lowerBound)...\(range.upperBound), or none")
                }
                configuration.retentionPolicy = .days(days)
            }
        }
        if let seconds = try integer("RETENTION_INTERVAL_SECONDS", in: 0...604_800) { configuration.retentionIntervalSeconds = seconds }
        if let directory = value("CHECKPOINT_WITNESS_DIR") { configuration.checkpointWitnessDirectory = directory }
        func witnessURL(_ name: String, _ raw: String) throws -> String {
            let text = raw.trimmingCharacters(in: .whitespaces)
            guard let parsed = URL(string: text), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                throw ConfigurationError(variable: name, value: raw, expected: "http:// or https:// URLs")
            }
            return text
        }
        if let list = value("CHECKPOINT_WITNESS_URLS") {
            configuration.checkpointWitnessURLs = try list.split(separator: ",").map { try witnessURL("CHECKPOINT_WITNESS_URLS", String($0)) }
        }
        if let tsa = value("CHECKPOINT_TSA_URL") {
            configuration.checkpointTSAURL = try witnessURL("CHECKPOINT_TSA_URL", tsa)
            if configuration.checkpointWitnessDirectory == nil {
                throw ConfigurationError(variable: "CHECKPOINT_TSA_URL", value: tsa, expected: "CHECKPOINT_WITNESS_DIR set too (tokens are kept there)")
            }
        }
        if let seconds = try integer("IDLE_TIMEOUT_SECONDS", in: 1...3600) { configuration.idleTimeoutSeconds = seconds }
        if let seconds = try integer("REQUEST_TIMEOUT_SECONDS", in: 1...3600) { configuration.requestTimeoutSeconds = seconds }
        if let seconds = try integer("WRITE_TIMEOUT_SECONDS", in: 1...3600) { configuration.writeTimeoutSeconds = seconds }
        if let seconds = try integer("HSTS_MAX_AGE_SECONDS", in: 0...(2 * 365 * 86_400)) { configuration.hstsMaxAgeSeconds = seconds }
        configuration.policy = try APIPolicy.parse(environment)
        configuration.webhooks = try WebhookSettings.parse(environment)
        return configuration
    }
}

/// A configuration value that could not be used.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The environment variable or flag.
    public var variable: String
    /// What was given.
    public var value: String
    /// What is accepted.
    public var expected: String

    /// Creates the error for `variable` set to `value`, which is not what `expected` describes.
    public init(variable: String, value: String, expected: String) {
        self.variable = variable
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(variable)=\(value) is invalid: expected \(expected)" }
}
