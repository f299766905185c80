import Logging
import NIOPosix
import ServiceLifecycle

/// Listens to one `NOTIFY` channel on a dedicated connection (outside the pool), reconnecting
/// after a failure, and reports what happens to `onEvent`.
///
/// The blocking waits run on the listener's own thread, never on the cooperative pool. Run it as a
/// `Service`: it stops on graceful shutdown or cancellation.
public final class PostgresListener: Service, Sendable {
    /// What the listener reports, in order.
    public enum Event: Sendable, Equatable {
        /// `LISTEN` is in effect: from now on every notification on the channel is delivered.
        case listening
        /// A notification arrived.
        case notified(PostgresNotification)
        /// The connection failed or closed; notifications may be missed until the next `listening`.
        case lost
    }

    let url: String
    let channel: String
    let retryDelay: Duration
    let logger: Logger
    let onEvent: @Sendable (Event) -> Void

    /// Creates a listener on `channel` (a plain identifier) of the database at `url`.
    public init(url: String, channel: String, retryDelay: Duration = .seconds(1),
                logger: Logger = Logger(label: "countersign.postgres.listener"), onEvent: @escaping @Sendable (Event) -> Void) {
        precondition(!channel.isEmpty && channel.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) },
                     "channel must be lower-case letters and underscores")
        self.url = url
        self.channel = channel
        self.retryDelay = retryDelay
        self.logger = logger
        self.onEvent = onEvent
    }

    /// Listens until cancelled or shut down gracefully.
    public func run() async throws {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        await cancelWhenGracefulShutdown { await self.listen(on: thread) }
        try? await thread.shutdownGracefully()
    }

    private func listen(on thread: NIOThreadPool) async {
        let url = url, channel = channel
        var failing = false  // log the first failure of a series as a warning, retries at debug
        while !Task.isCancelled {
            do {
                let connection = try await thread.runIfActive {
                    let connection = try PostgresConnection(url: url, applicationName: "countersign-listener")
                    _ = try connection.query("LISTEN \(channel)")
                    return connection
                }
                onEvent(.listening)
                if failing { logger.notice("listening to database notifications again", metadata: ["channel": "\(channel)"]) }
                failing = false
                while !Task.isCancelled {
                    let received = try await thread.runIfActive { try connection.notifications(waitingAtMost: .milliseconds(250)) }
                    for notification in received { onEvent(.notified(notification)) }
                }
                onEvent(.lost)
            } catch {
                onEvent(.lost)
                if Task.isCancelled { return }
                logger.log(level: failing ? .debug : .warning, "database notifications lost; retrying every \(retryDelay)",
                           metadata: ["channel": "\(channel)", "error": "\(error)"])
                failing = true
                try? await Task.sleep(for: retryDelay)
            }
        }
    }
}
