import ArgumentParser
import CountersignClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `send`: drains the queue through the SDK; with `--until-empty` it waits out a network that
/// is down, as an app does when connectivity returns.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Upload the queued proofs (oldest first); each is removed only after the server's definitive answer."
    )

    @Option(help: "The queue folder.") var queue: String
    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.") var server: String
    @Option(help: "Attempts per request before the drain stops (the SDK's RetryPolicy).") var maxAttempts = 6
    @Option(help: "Longest wait between attempts, seconds.") var maxDelay = 60.0
    @Flag(help: "Keep draining, with backoff, until the queue is empty.") var untilEmpty = false
    @Option(help: "Give up --until-empty after this many seconds.") var deadline = 600.0
    @Option(help: ArgumentHelp("Test hook: SIGKILL this process after the Nth answer, before its file is removed.",
                               visibility: .hidden))
    var crashAfterAnswers: Int?
    @Option(help: ArgumentHelp("Test hook: wait this many seconds after each answer, so a kill from outside lands mid-queue.",
                               visibility: .hidden))
    var pauseAfterAnswer: Double?

    /// One line per outcome, written at once (`print` buffers when stdout is a file): a run
    /// killed mid-queue — the end-to-end test does it with SIGKILL — keeps the lines of the proofs
    /// it had already sent.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func run() async throws {
        guard let token = ProcessInfo.processInfo.environment["COURIER_TOKEN"], !token.isEmpty else {
            throw ValidationError("COURIER_TOKEN must hold the courier's API key")
        }
        guard let baseURL = URL(string: server), baseURL.scheme != nil else { throw ValidationError("--server is not a URL") }
        let client = CourierClient(baseURL: baseURL, token: token,
                                   retryPolicy: RetryPolicy(maxAttempts: maxAttempts, maxDelay: maxDelay))
        let queue = try ProofQueue(folder: queue)
        let answers = AnswerCounter(crashAfter: crashAfterAnswers, pause: pauseAfterAnswer)
        let started = Date()
        var round = 0
        while true {
            round += 1
            let report = try await queue.drain(with: client) { item, receipt in
                Self.say("sent \(item.fileName) reference=\(receipt.reference) proof=\(receipt.proofID)\(receipt.replayed ? " (replayed)" : "")")
                answers.count()
            }
            for rejected in report.rejected {
                Self.say("rejected \(rejected.item.fileName) reference=\(rejected.item.proof.reference): \(rejected.problem.status) \(rejected.problem.code)")
            }
            if report.busy { Self.say("another drain holds \(queue.folder)") }
            if let stopped = report.stoppedBy { Self.say("stopped with \(report.remaining) queued: \(stopped)") }
            let left = try await queue.pending().count
            if left == 0 || !untilEmpty { return finish(left: left, rejected: try await queue.rejected().count) }
            guard Date().timeIntervalSince(started) < deadline else { return finish(left: left, rejected: try await queue.rejected().count) }
            try await Task.sleep(nanoseconds: UInt64(min(maxDelay, 0.5 * Double(min(round, 6))) * 1_000_000_000))
        }
    }

    private func finish(left: Int, rejected: Int) {
        Self.say("queue: \(left) pending, \(rejected) rejected")
        if left > 0 || rejected > 0 { Foundation.exit(left > 0 ? 3 : 4) }
    }
}

/// The test hooks' state: counts answers for the crash hook (the drain's callback is synchronous and `Sendable`).
final class AnswerCounter: @unchecked Sendable {
    // Only touched from the queue actor's drain, one call at a time.
    private var answers = 0
    private let crashAfter: Int?
    private let pause: Double?

    init(crashAfter: Int?, pause: Double?) {
        self.crashAfter = crashAfter
        self.pause = pause
    }

    func count() {
        answers += 1
        if let crashAfter, answers >= crashAfter {
            // The harshest crash: no cleanup, no flush, exactly between the answer and the removal.
            fflush(nil)  // every C stream: what was printed reaches the log before the kill
            kill(getpid(), SIGKILL)
        }
        // Blocking on purpose: the drain's callback is synchronous, and this is a test hook.
        if let pause { usleep(UInt32(pause * 1_000_000)) }
    }
}
