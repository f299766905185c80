import Logging
import ProofStore
import Synchronization

/// Signs the scheduled checkpoint and hands it to every configured witness, recording what each
/// answered (``WitnessReceiptStore``). A checkpoint some witness did not take is kept and offered
/// again on the next ``tick()`` (to the witnesses that failed only), so a witness that was down for
/// a while still receives every checkpoint signed meanwhile.
public final class CheckpointPublisher: Sendable {
    let store: AuditCheckpointStore
    let receipts: WitnessReceiptStore
    let directory: WitnessDirectory?
    let receivers: [HTTPWitness]
    let timestampAuthority: HTTPWitness?
    let logger: Logger
    /// Checkpoints not yet taken by every witness, oldest first, with the witnesses still owed.
    private let pending = Mutex<[(StoredCheckpoint, Set<String>)]>([])
    /// Pending checkpoints kept at most (the oldest are dropped, and logged, past it).
    static let pendingLimit = 1_000

    /// Publishes checkpoints signed by `store` to `directory`, each of `receivers` (HTTP POST of
    /// the file's bytes) and, with a directory, to `timestampAuthority` (its token is written
    /// beside the file).
    public init(store: AuditCheckpointStore, receipts: WitnessReceiptStore, directory: WitnessDirectory?, receivers: [HTTPWitness] = [],
                timestampAuthority: HTTPWitness? = nil, logger: Logger = Logger(label: "countersign.checkpoints")) {
        self.store = store
        self.receipts = receipts
        self.directory = directory
        self.receivers = receivers
        self.timestampAuthority = directory == nil ? nil : timestampAuthority
        self.logger = logger
    }

    /// Retries what is pending, then signs a checkpoint when a chain moved (and this replica holds
    /// the schedule's lock) and publishes it. Returns the new checkpoint, if one was signed.
    @discardableResult
    public func tick() async throws -> StoredCheckpoint? {
        let owed = pending.withLock { queue in
            let current = queue
            queue.removeAll()
            return current
        }
        for (stored, witnesses) in owed { await publish(stored, to: witnesses) }
        guard let stored = try await store.signIfMoved() else { return nil }
        logger.info("checkpoint signed", metadata: ["id": "\(stored.id)", "seq": "\(stored.checkpoint.seq)"])
        await publish(stored, to: witnessNames)
        return stored
    }

    /// The names of the configured witnesses.
    var witnessNames: Set<String> {
        var names = Set(receivers.map { "http " + $0.url })
        if directory != nil { names.insert("directory") }
        if timestampAuthority != nil { names.insert("tsa") }
        return names
    }

    /// Offers `stored` to `witnesses`; those that fail stay pending.
    func publish(_ stored: StoredCheckpoint, to witnesses: Set<String>) async {
        guard !witnesses.isEmpty else { return }
        var owed: Set<String> = []
        var outcomes: [WitnessReceipt] = []
        let file: WitnessFile
        do { file = try WitnessFile(stored.checkpoint) } catch {
            logger.error("checkpoint cannot be encoded", metadata: ["id": "\(stored.id)", "error": "\(error)"])
            return
        }
        if witnesses.contains("directory"), let directory {
            do {
                try await directory.write(file.bytes, as: file.name)
                outcomes.append(WitnessReceipt(kind: .directory, witness: file.name, succeeded: true))
            } catch WitnessError.alreadyWitnessed {
                outcomes.append(WitnessReceipt(kind: .directory, witness: file.name, succeeded: true, detail: "already present"))
            } catch {
                owed.insert("directory")
                outcomes.append(WitnessReceipt(kind: .directory, witness: file.name, succeeded: false, detail: "\(error)"))
                logger.error("witness directory did not take the checkpoint",
                             metadata: ["id": "\(stored.id)", "directory": "\(directory.path)", "error": "\(error)"])
            }
        }
        if witnesses.contains("tsa"), let timestampAuthority, let directory, !owed.contains("directory") {
            do {
                try await timestamp(file, by: timestampAuthority, into: directory)
                outcomes.append(WitnessReceipt(kind: .tsa, witness: timestampAuthority.url, succeeded: true))
            } catch {
                owed.insert("tsa")
                outcomes.append(WitnessReceipt(kind: .tsa, witness: timestampAuthority.url, succeeded: false, detail: "\(error)"))
                logger.error("timestamp authority did not stamp the checkpoint", metadata: ["id": "\(stored.id)", "error": "\(error)"])
            }
        } else if witnesses.contains("tsa") {
            owed.insert("tsa")
        }
        for receiver in receivers where witnesses.contains("http " + receiver.url) {
            do {
                _ = try await receiver.post(file.bytes, contentType: "application/json", headers: [("Countersign-Checkpoint", file.name)])
                outcomes.append(WitnessReceipt(kind: .http, witness: receiver.url, succeeded: true))
            } catch {
                owed.insert("http " + receiver.url)
                outcomes.append(WitnessReceipt(kind: .http, witness: receiver.url, succeeded: false, detail: "\(error)"))
                logger.error("HTTP witness did not take the checkpoint", metadata: ["id": "\(stored.id)", "url": "\(receiver.url)", "error": "\(error)"])
            }
        }
        do { try await receipts.record(outcomes, checkpointID: stored.id) } catch {
            logger.warning("witness receipts not recorded", metadata: ["id": "\(stored.id)", "error": "\(error)"])
        }
        if !owed.isEmpty { keepPending(stored, owed) }
    }

    /// Asks the TSA for a token over the file's exact bytes, checks it names them, and writes it
    /// beside the file (an existing token is kept: a retry after a crash changes nothing).
    func timestamp(_ file: WitnessFile, by authority: HTTPWitness, into directory: WitnessDirectory) async throws {
        let request = TimestampRequest(for: file.bytes)
        let reply = try await authority.post(request.der, contentType: "application/timestamp-query")
        try request.accepts(reply).get()
        do {
            try await directory.write(reply, as: WitnessFile.tokenName(for: file.name))
        } catch WitnessError.alreadyWitnessed {
            return
        }
    }

    func keepPending(_ stored: StoredCheckpoint, _ owed: Set<String>) {
        let dropped = pending.withLock { queue -> StoredCheckpoint? in
            queue.append((stored, owed))
            return queue.count > Self.pendingLimit ? queue.removeFirst().0 : nil
        }
        if let dropped {
            logger.error("checkpoint dropped from the witness retry queue", metadata: ["id": "\(dropped.id)"])
        }
    }
}
