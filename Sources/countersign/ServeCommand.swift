import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Postgres
import Prometheus
import ServiceLifecycle
import ProofAPI
import ProofService
import ProofStore
import ServiceLifecycle
import Webhooks

/// `countersign serve`: the HTTP service.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the Countersign API and web console.",
        discussion: "Every option can also be set through the environment variable named in its help; options win."
    )

    @Option(help: "Interface to bind (HOST, default 127.0.0.1).") var host: String?
    @Option(help: "TCP port (PORT, default 8080).") var port: Int?
    @Option(name: .customLong("database-url"), help: "libpq URL (DATABASE_URL).") var databaseURL: String?
    @Option(help: "trace|debug|info|notice|warning|error|critical (LOG_LEVEL, default info).") var logLevel: String?
    @Option(help: "Database connections and libpq threads (DB_POOL_SIZE, default 10).") var poolSize: Int?
    @Option(help: "Largest request body in bytes (BODY_LIMIT, default 1048576).") var bodyLimit: Int?
    @Flag(help: "Do not apply migrations at start (MIGRATE_ON_START=false); only a privileged role can, the runtime role checks none is pending.")
    var noMigrate = false
    @Flag(help: "Serve even as a role that can rewrite evidence: superuser, owner (ALLOW_PRIVILEGED_DATABASE_ROLE=true; development only).")
    var allowPrivilegedDatabaseRole = false
    @Option(help: "Folder of numbered SQL migrations (MIGRATIONS_DIR).") var migrationsDir: String?
    @Option(help: "Folder of the web console (PUBLIC_DIR, default ./public).") var publicDir: String?
    @Flag(help: "Do not serve GET /metrics (METRICS_ENABLED=false).") var noMetrics = false
    @Flag(help: "Without CHECKPOINT_KEY_FILE, sign with <DATA_DIR>/checkpoint-ed25519.pem, generated if missing: development only (CHECKPOINT_KEY_GENERATE=true).")
    var generateCheckpointKey = false

    func run() async throws {
        var configuration = try ServiceConfiguration.fromEnvironment()
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let databaseURL { configuration.databaseURL = databaseURL }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
            }
            configuration.logLevel = level
        }
        if let poolSize { configuration.poolSize = poolSize }
        if let bodyLimit { configuration.bodyLimit = bodyLimit }
        if noMigrate { configuration.migrateOnStart = false }
        if allowPrivilegedDatabaseRole { configuration.allowPrivilegedDatabaseRole = true }
        if let migrationsDir { configuration.migrationsDirectory = migrationsDir }
        if let publicDir { configuration.publicDirectory = publicDir }
        if generateCheckpointKey { configuration.generateCheckpointKey = true }
        let metricsEnabled = try !noMetrics && CountersignMetrics.isEnabled()

        LoggingSetup.bootstrap(level: configuration.logLevel)
        var logger = Logger(label: "countersign")
        logger.logLevel = configuration.logLevel

        // The checkpoint key is loaded (or, explicitly allowed, made) now: a missing or broken key
        // stops the start with one line, not the first auditor's request; its public key is what
        // auditors pin.
        let checkpointKeys = CheckpointKeyProvider(configuration: configuration)
        let existed = FileManager.default.fileExists(atPath: checkpointKeys.location)
        let publicKey = try checkpointKeys.key().publicKey
        let generated = configuration.checkpointKeyFile == nil && !existed
        logger.log(level: configuration.checkpointKeyFile == nil ? .warning : .info,
                   generated ? "checkpoint signing key GENERATED (development only: CHECKPOINT_KEY_GENERATE)"
                       : configuration.checkpointKeyFile == nil ? "checkpoint signing key from DATA_DIR (development only: CHECKPOINT_KEY_GENERATE)"
                       : "checkpoint signing key",
                   metadata: ["key_id": "\(publicKey.keyID)", "public_key": "\(publicKey.rawRepresentation.hexString)",
                              "file": "\(checkpointKeys.location)"])

        // The data keys likewise: without them no proof could be stored sealed, and none is ever
        // stored in clear instead.
        let dataKeys = DataKeyProvider(configuration: configuration)
        let dataKeysExisted = FileManager.default.fileExists(atPath: dataKeys.location)
        let keys = try dataKeys.keys()
        let activeKeyID = (keys as? DataKeyring)?.activeKeyID ?? "?"
        logger.log(level: configuration.dataKeyFile == nil ? .warning : .info,
                   configuration.dataKeyFile == nil
                       ? (dataKeysExisted ? "data keys from DATA_DIR (development only: DATA_KEY_GENERATE)"
                                          : "data keys GENERATED (development only: DATA_KEY_GENERATE)")
                       : "data keys",
                   metadata: ["active_key_id": "\(activeKeyID)", "file": "\(dataKeys.location)"])

        let database = PostgresClient(
            configuration: PostgresConfiguration(url: configuration.databaseURL, poolSize: configuration.poolSize),
            logger: Logger(label: "countersign.postgres"))
        do {
            try await ServeDatabaseGate.prepare(database: database, configuration: configuration, logger: logger)
            // A key file that is not this database's (another deployment's, or a rotated key left
            // out) is found now, on the newest stored data key, not at the first read of a proof.
            try await ProofSealer(keys: dataKeys).checkNewestStoredKey(in: database)
        } catch {
            await database.shutdown()
            throw error
        }
        // Monthly partitions: the current month and three ahead, now and every 24 h while serving
        // (every replica does it; the SQL function serialises them). Failures are logged, retried
        // after an hour, never fatal.
        let partitions = PartitionMaintenance(database: database, logger: Logger(label: "countersign.partitions"))
        let partitionsReady = await partitions.runLoggingFailure()
        // One registry for our series and for anything in the process that reports through swift-metrics
        // (bootstrapped here only: the global system can be set once per process, tests pass their own).
        var metrics: CountersignMetrics?
        if metricsEnabled {
            let serviceMetrics = CountersignMetrics()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: serviceMetrics.registry))
            metrics = serviceMetrics
        }
        let readDatabase = configuration.databaseReadURL.map { url in
            PostgresClient(configuration: PostgresConfiguration(url: url, poolSize: configuration.poolSize),
                           logger: Logger(label: "countersign.postgres.read"))
        }
        if readDatabase != nil { logger.info("delivery searches and audit listings read from DATABASE_READ_URL") }
        let maintenance = PartitionMaintenanceService(
            partitions, firstRunAfter: partitionsReady ? PartitionMaintenance.interval : PartitionMaintenance.retryInterval)
        var background: [any Service] = [maintenance] + (try webhookSender(configuration, database: database, logger: logger))
        // Retention: erases only what the database's policy makes due (migration 0027).
        let retention = RetentionRepository(database: database)
        let policy = try await retention.policy()
        if configuration.retentionIntervalSeconds > 0 {
            background.append(RetentionService(retention: retention, interval: .seconds(configuration.retentionIntervalSeconds)))
        }
        logger.info("retention", metadata: ["policy": "\(policy)", "interval_seconds": "\(configuration.retentionIntervalSeconds)"])
        // Scheduled checkpoints, published to the witnesses (docs/audit.md, "Witnessed checkpoints").
        if configuration.checkpointIntervalSeconds > 0 {
            let publisher = CheckpointPublisher(
                store: AuditCheckpointStore(database: database, key: try checkpointKeys.key()), receipts: WitnessReceiptStore(database: database),
                directory: configuration.checkpointWitnessDirectory.map(WitnessDirectory.init(path:)),
                receivers: configuration.checkpointWitnessURLs.map { HTTPWitness(url: $0) },
                timestampAuthority: configuration.checkpointTSAURL.map { HTTPWitness(url: $0) })
            background.append(ScheduledCheckpointService(publisher: publisher, interval: .seconds(configuration.checkpointIntervalSeconds)))
            logger.info("scheduled checkpoints", metadata: ["interval_seconds": "\(configuration.checkpointIntervalSeconds)",
                                                           "witness_dir": "\(configuration.checkpointWitnessDirectory ?? "none")",
                                                           "witness_urls": "\(configuration.checkpointWitnessURLs.count)",
                                                           "tsa": "\(configuration.checkpointTSAURL ?? "none")"])
        }
        let app = CountersignApplication.make(configuration: configuration, database: database, logger: logger, metrics: metrics,
                                              checkpointKeys: checkpointKeys, dataKeys: dataKeys, readDatabase: readDatabase,
                                              services: background)
        logger.info("countersign listening", metadata: ["url": "http://\(configuration.host):\(configuration.port)"])
        try await app.runService()
    }

    /// The webhook sender, a background service of every replica; none without `WEBHOOK_SECRETS_KEY`
    /// (nothing can be signed, and the API refuses to register endpoints).
    func webhookSender(_ configuration: ServiceConfiguration, database: PostgresClient, logger: Logger) throws -> [any Service] {
        let settings = configuration.webhooks
        guard let key = settings.secretsKey else {
            logger.info("webhooks off: WEBHOOK_SECRETS_KEY is not set")
            return []
        }
        guard settings.senderEnabled else {
            logger.info("webhook sender off in this replica: WEBHOOK_SENDER_ENABLED=false (events wait in the outbox)")
            return []
        }
        if settings.allowPrivateNetworks { logger.warning("webhooks may be sent to private networks (WEBHOOK_ALLOW_PRIVATE_NETWORKS)") }
        return [WebhookSender(queue: WebhookDeliveryQueue(database: database), box: try WebhookSecretBox(encodedKey: key),
                              urlGuard: WebhookURLGuard(allowsPrivateNetworks: settings.allowPrivateNetworks),
                              transport: HTTPWebhookTransport(), settings: settings, notificationsURL: configuration.databaseURL)]
    }
}
