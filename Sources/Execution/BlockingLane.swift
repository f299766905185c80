import NIOPosix

/// Threads of our own for calls that wait rather than compute — a DNS look-up, a child process
/// (`openssl ts -verify`), a small file write — so that waiting never holds a thread of Swift's
/// cooperative pool, an event loop, or NIO's shared blocking pool (`NIOThreadPool.singleton`).
///
/// The shared pool is Hummingbird's: `FileMiddleware` reads the console's files on it. It has one
/// thread per core, so on a two-core machine two slow look-ups there would leave `GET /` waiting
/// behind a resolver; a lane of our own keeps each kind of waiting from queueing behind another.
/// CPU-heavy work does not belong here (it has `CPUWorkPool`), nor do libpq calls (each
/// `PostgresClient` owns one thread per connection).
public final class BlockingLane: Sendable {
    /// Webhook DNS look-ups, the witness's files and its timestamp checks: rare, short, and
    /// allowed to wait seconds on the network or a child process.
    public static let waiting = BlockingLane(name: "waiting", threads: 4)

    /// The lane's name, for logs and tests.
    public let name: String
    /// How many calls may wait at once; more queue behind them.
    public let threads: Int
    private let pool: NIOThreadPool

    /// A lane of `threads` threads, started now and kept for the life of the process (the lanes
    /// are static: a process has one of each).
    init(name: String, threads: Int) {
        precondition(threads > 0, "a lane needs a thread")
        self.name = name
        self.threads = threads
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `work` on one of the lane's threads and returns its result; a task cancelled before
    /// the work starts gets `CancellationError` and the work never runs.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }
}
