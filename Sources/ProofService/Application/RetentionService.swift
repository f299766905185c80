import Logging
import ProofStore
import ServiceLifecycle

/// The retention job of a serving replica (migration 0027, docs/data-protection.md §5): every
/// `interval` it erases, in transactions of `batch` deliveries with their `delivery_erased` events,
/// what the database's policy makes due, pausing `pause` between transactions so that a backlog
/// (a policy set on years of data) never crowds out uploads. Replicas may all run it: each
/// transaction skips rows another holds. A failure is logged and retried at the next run.
public struct RetentionService: Service {
    let retention: RetentionRepository
    let interval: Duration
    let batch: Int
    let pause: Duration
    let logger: Logger

    public init(retention: RetentionRepository, interval: Duration, batch: Int = 100, pause: Duration = .milliseconds(200),
                logger: Logger = Logger(label: "countersign.retention")) {
        self.retention = retention
        self.interval = interval
        self.batch = batch
        self.pause = pause
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await sweep() } catch is CancellationError { return } catch {
                    logger.error("retention run failed; retrying at the next run", metadata: ["error": "\(error)"])
                }
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
    }

    /// Erases everything due now, batch by batch; returns how many deliveries it erased.
    @discardableResult
    public func sweep() async throws -> Int {
        var erased = 0
        while true {
            let references = try await retention.eraseDue(limit: batch)
            erased += references.count
            if !references.isEmpty {
                logger.info("retention erased deliveries", metadata: ["count": "\(references.count)", "first": "\(references[0])"])
            }
            guard references.count == batch else { return erased }
            try await Task.sleep(for: pause)
        }
    }
}
