import Execution

/// The CPU pool's (light) threads as a ``CPUOffload``: the service's own work that its caller
/// already bounds, with no key and no admission (``CPUWorkPool/runOnThreads(_:)``).
public struct CPUPoolOffload: CPUOffload {
    public init() {}

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await CPUWorkPool.runOnThreads(work)
    }
}
