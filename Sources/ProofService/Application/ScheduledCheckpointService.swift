import Logging
import ServiceLifecycle

/// Signs and publishes a checkpoint every interval (`CHECKPOINT_INTERVAL_SECONDS`) while serving,
/// as a service of the application so it stops with the server. Every replica runs it; the
/// publisher's advisory lock lets one sign at a time, and nothing is signed while no chain moved.
/// A failed round is logged and the next one tries again.
public struct ScheduledCheckpointService: Service {
    let publisher: CheckpointPublisher
    let interval: Duration
    let logger: Logger

    /// Runs `publisher` every `interval`, the first time one interval after start.
    public init(publisher: CheckpointPublisher, interval: Duration, logger: Logger = Logger(label: "countersign.checkpoints")) {
        self.publisher = publisher
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                do { try await publisher.tick() } catch {
                    logger.error("scheduled checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
