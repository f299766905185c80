/// Where a lower layer runs CPU work it cannot bound by itself (opening and hashing the sealed
/// proofs of a verification), so that it need not know the service's thread pools. The service
/// passes its CPU pool's threads (`CPUWorkPool.offload`); ``inline`` runs the work on the caller's
/// thread, for commands and tests that own theirs.
public protocol CPUOffload: Sendable {
    /// `work`'s result, computed on the offload's threads.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T
}

/// Runs the work where it is asked for.
public struct InlineCPUOffload: CPUOffload {
    public init() {}

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try work()
    }
}

extension CPUOffload where Self == InlineCPUOffload {
    /// The work on the caller's thread.
    public static var inline: InlineCPUOffload { InlineCPUOffload() }
}
