import ArgumentParser
import CountersignClient

/// `status`: what is waiting and what was refused.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "List the queued and rejected proofs.")

    @Option(help: "The queue folder.") var queue: String

    func run() async throws {
        let queue = try ProofQueue(folder: queue)
        let pending = try await queue.pending()
        for item in pending { print("pending \(item.fileName) reference=\(item.proof.reference) idempotency-key=\(item.proof.idempotencyKey)") }
        let rejected = try await queue.rejected()
        for name in rejected { print("rejected \(name)") }
        print("queue: \(pending.count) pending, \(rejected.count) rejected")
    }
}
