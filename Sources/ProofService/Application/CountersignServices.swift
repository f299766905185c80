import Cryptography
import Postgres
import ProofStore
import Webhooks

/// The repositories and use cases of one running service, built once where the application is
/// built and handed to the HTTP layer (which builds none of its own).
///
/// Writes and anything that must see the newest rows use the primary database; delivery searches
/// and audit listings/verification use the read replica when one is configured.
public struct CountersignServices: Sendable {
    public let policy: APIPolicy
    public let deliveries: DeliveryRepository
    /// Where delivery searches read: the read replica when configured.
    public let searches: DeliveryRepository
    public let keys: APIKeyRepository
    public let idempotency: IdempotencyRepository
    /// The audit log on the primary (appends).
    public let audit: AuditLog
    /// The audit log where listings read.
    public let auditReads: AuditLog
    public let auditVerifier: AuditVerifier
    public let checkpointKeys: CheckpointKeyProvider
    /// The keys that wrap every delivery's data key (sealed proofs).
    public let dataKeys: DataKeyProvider
    public let registration: DeliveryRegistration
    /// Failed attempts (`POST .../attempts`).
    public let attempts: AttemptRecording
    /// Cancelling or giving up a delivery (`POST .../cancel`, `POST .../fail`).
    public let closing: DeliveryClosing
    public let intake: ProofIntake
    /// Device keys: registration, approval, revocation (`/v1/devices`).
    public let devices: DeviceKeyAdministration
    public let reader: ProofReader
    /// Erasing a delivery's personal data, and legal holds (0026).
    public let erasure: DeliveryErasure
    /// Webhook administration (the sender is a background service of its own: ``makeWebhookSender(settings:notificationsURL:)``).
    public let webhooks: WebhookAdministration
    /// The outbox's queue (the sender's and the admin listing's).
    public let webhookQueue: WebhookDeliveryQueue
    /// Where CPU-heavy work of requests runs (parsing, rendering).
    public let work: CPUWorkPool
    let database: PostgresClient

    /// Builds every repository and use case over `database` (and `readDatabase`, when given);
    /// `metrics` hears of renders and stored proofs; `webhooks` and `resolver` (tests inject one)
    /// configure webhook administration.
    public init(policy: APIPolicy, database: PostgresClient, readDatabase: PostgresClient? = nil,
                checkpointKeys: CheckpointKeyProvider, dataKeys: DataKeyProvider, metrics: (any ServiceMetrics)? = nil,
                webhooks: WebhookSettings = WebhookSettings(), resolver: any HostResolver = SystemHostResolver()) {
        let reads = readDatabase ?? database
        self.policy = policy
        self.database = database
        self.deliveries = DeliveryRepository(database: database, dataKeys: dataKeys)
        self.searches = DeliveryRepository(database: reads)
        self.keys = APIKeyRepository(database: database)
        self.idempotency = IdempotencyRepository(database: database)
        self.audit = AuditLog(database: database)
        self.auditReads = AuditLog(database: reads)
        self.auditVerifier = AuditVerifier(database: reads, dataKeys: dataKeys, hashing: VerificationHashing.offloaded(slices: 1),
                                           offload: CPUPoolOffload())
        self.checkpointKeys = checkpointKeys
        self.dataKeys = dataKeys
        self.registration = DeliveryRegistration(deliveries: deliveries)
        let lifecycle = LifecycleRepository(database: database, dataKeys: dataKeys)
        self.attempts = AttemptRecording(deliveries: deliveries, lifecycle: lifecycle, policy: policy)
        self.closing = DeliveryClosing(deliveries: deliveries, lifecycle: lifecycle)
        let proofs = ProofRepository(database: database, dataKeys: dataKeys)
        let work = CPUWorkPool(queueLimit: policy.cpuQueueLimit, perKeyLimit: policy.cpuPerKeyLimit, sharePerKey: policy.cpuSharePerKey,
                                heavyShare: policy.cpuHeavyShare, heavyBurst: policy.cpuHeavyBurstSeconds)
        self.work = work
        let deviceKeys = DeviceKeyRepository(database: database)
        self.devices = DeviceKeyAdministration(keys: deviceKeys)
        self.intake = ProofIntake(proofs: proofs, devices: deviceKeys, policy: policy, work: work, metrics: metrics)
        self.reader = ProofReader(proofs: proofs, deliveries: deliveries, audit: audit, pngCacheBytes: policy.pngCacheBytes,
                                  work: work, metrics: metrics)
        self.erasure = DeliveryErasure(deliveries: deliveries, erasures: ErasureRepository(database: database), reader: reader)
        let queue = WebhookDeliveryQueue(database: database)
        self.webhookQueue = queue
        // A key that does not parse was refused when the settings were read; nil here means "not configured".
        let box = webhooks.secretsKey.flatMap { try? WebhookSecretBox(encodedKey: $0) }
        self.webhooks = WebhookAdministration(
            endpoints: WebhookEndpointRepository(database: database), queue: queue, box: box,
            urlGuard: WebhookURLGuard(resolver: resolver, allowsPrivateNetworks: webhooks.allowPrivateNetworks),
            rotationGrace: webhooks.rotationGrace)
    }

    /// The checkpoints signed with `key` (on the primary: signing stores the checkpoint).
    public func checkpoints(signingWith key: Ed25519PrivateKey) -> AuditCheckpointStore {
        AuditCheckpointStore(database: database, key: key)
    }

    /// Witness receipts: recorded on the primary, listed from there too (a listing must show the
    /// newest checkpoint's witnesses as soon as they answered).
    public var witnessReceipts: WitnessReceiptStore { WitnessReceiptStore(database: database) }

    /// An exporter signing with `key` (on the primary: it must see every committed proof).
    public func exporter(signingWith key: Ed25519PrivateKey) -> ProofExporter {
        ProofExporter(database: database, key: key, dataKeys: dataKeys, work: work)
    }
}
