import ProofStore
import ServiceLifecycle

/// Monthly partitions kept ahead while serving: ``PartitionMaintenance`` every day (sooner after
/// a failure), as a service of the application, so it stops with the server on shutdown.
public struct PartitionMaintenanceService: Service {
    let maintenance: PartitionMaintenance
    let firstRunAfter: Duration

    /// Runs `maintenance` periodically, the first time after `firstRunAfter` (callers that ran it
    /// at start pass the interval, or the retry interval when that run failed).
    public init(_ maintenance: PartitionMaintenance, firstRunAfter: Duration) {
        self.maintenance = maintenance
        self.firstRunAfter = firstRunAfter
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await maintenance.runPeriodically(firstRunAfter: firstRunAfter)
        }
    }
}
