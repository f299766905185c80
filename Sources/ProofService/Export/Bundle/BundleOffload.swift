import Foundation

/// Where an export's CPU work runs: the CPU work pool, as the service's own work (no API key's
/// budget). The pool refuses at once when it is full (uploads come first); an export then waits a
/// moment and asks again rather than failing half-way through a stream.
struct BundleOffload: Sendable {
    let work: CPUWorkPool

    func run<T: Sendable>(_ job: @escaping @Sendable () throws -> T) async throws -> T {
        while true {
            do {
                return try await work.run(for: nil, job)
            } catch let error as ServiceError where error.code == "busy" {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
