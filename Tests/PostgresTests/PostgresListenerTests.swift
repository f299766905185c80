import Foundation
import Postgres
import Synchronization
import Testing

@Suite("LISTEN/NOTIFY listener", .enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
struct PostgresListenerTests {
    /// Events as the listener reported them.
    final class Recorder: Sendable {
        private let events = Mutex<[PostgresListener.Event]>([])
        func record(_ event: PostgresListener.Event) { events.withLock { $0.append(event) } }
        var all: [PostgresListener.Event] { events.withLock { $0 } }

        /// Waits until `count` events satisfy `matches`, at most 240 s: in a full run, other suites'
        /// synchronous work can hold both cooperative threads for a minute or more.
        func wait(for count: Int = 1, _ matches: (PostgresListener.Event) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(240)
            while all.filter(matches).count < count {
                guard ContinuousClock.now < deadline else {
                    Issue.record("timed out; events so far: \(all)")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    @Test("notifications arrive; a killed connection is reported lost, then the listener listens again")
    func notifiesAndReconnects() async throws {
        let channel = "cs_test_" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
        let recorder = Recorder()
        let listener = PostgresListener(url: TestDatabase.url!, channel: channel, retryDelay: .milliseconds(50)) { recorder.record($0) }
        let task = Task { try await listener.run() }
        defer { task.cancel() }
        try await TestDatabase.withClient { client in
            try await recorder.wait { $0 == .listening }
            try await client.query("SELECT pg_notify($1, $2)", [channel, "first"])
            try await recorder.wait { $0 == .notified(PostgresNotification(channel: channel, payload: "first")) }

            // Kill the listener's backend, as a failover or a DBA would.
            let killed = try await client.query("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE application_name = 'countersign-listener' AND query = $1
                """, ["LISTEN \(channel)"]).decode(Int.self, row: 0, column: 0)
            #expect(killed == 1)
            try await recorder.wait { $0 == .lost }
            try await recorder.wait(for: 2) { $0 == .listening }
            try await client.query("SELECT pg_notify($1, $2)", [channel, "second"])
            try await recorder.wait { $0 == .notified(PostgresNotification(channel: channel, payload: "second")) }
        }
        task.cancel()
        try await task.value
        // Nothing on another channel was delivered.
        #expect(recorder.all.allSatisfy { if case .notified(let n) = $0 { n.channel == channel } else { true } })
    }
}
