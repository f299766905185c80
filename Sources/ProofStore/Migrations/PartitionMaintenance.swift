import Foundation
import Logging
import Postgres

/// Creates the monthly partitions of Countersign's partitioned tables ahead of time.
///
/// `proofs` (migration 0008) and, once converted, `audit_events` are partitioned by month; a row
/// whose month has no partition lands in the table's `_default` partition, which must stay empty
/// (it cannot be detached and dropped with its month, and it blocks creating that month's
/// partition later). This calls `countersign_maintain_partitions` (migration 0012: the runtime
/// role's narrow, SECURITY DEFINER door to `countersign_ensure_monthly_partitions` of 0008) for every
/// table of ``tables`` that is partitioned in the database — looked up in `pg_partitioned_table`,
/// so it works before and after a table is converted — creating the current month and the next
/// ``monthsAhead`` months when missing. `countersign migrate` runs it once, `countersign serve` at
/// start and then every ``interval``. Concurrent runs from several replicas are safe: the SQL
/// function serialises them with an advisory lock and creates each partition once.
public struct PartitionMaintenance: Sendable {
    /// The tables that may be partitioned by month, in the order they are maintained.
    public static let tables = ["proofs", "audit_events"]
    /// How often a serving process runs the maintenance.
    public static let interval: Duration = .seconds(24 * 60 * 60)
    /// How soon a serving process tries again after a run that failed or left a partition uncreated.
    public static let retryInterval: Duration = .seconds(60 * 60)

    /// One partition the maintenance tried to create.
    public struct Outcome: Sendable, Equatable {
        /// The partitioned table.
        public var table: String
        /// The partition, `<table>_pYYYYMM`.
        public var partition: String
        /// First instant of its month (UTC), inclusive.
        public var rangeStart: Date
        /// First instant of the next month, exclusive.
        public var rangeEnd: Date
        /// `nil` when the partition was created, else PostgreSQL's reason it was not.
        public var error: String?
    }

    let database: PostgresClient
    let logger: Logger
    /// Months after the current one whose partitions must exist.
    public var monthsAhead: Int

    /// Creates the maintenance over `database`.
    public init(database: PostgresClient, logger: Logger = Logger(label: "countersign.partitions"), monthsAhead: Int = 3) {
        self.database = database
        self.logger = logger
        self.monthsAhead = monthsAhead
    }

    /// The tables of ``tables`` that are partitioned in this database (by name on the search path).
    public func partitionedTables() async throws -> [String] {
        let rows = try await database.query("""
            SELECT t.name FROM unnest(string_to_array(\(Self.tables.joined(separator: ",")), ',')) WITH ORDINALITY t(name, n)
            JOIN pg_partitioned_table pt ON pt.partrelid = to_regclass(t.name)
            ORDER BY t.n
            """).rows
        return try rows.map { try $0.decode(String.self, "name") }
    }

    /// Creates the missing partitions once and logs each one created (`info`) or not created
    /// (`error`); returns them. Partitions that already exist are not reported. Throws only when
    /// the database cannot be asked at all.
    @discardableResult
    public func run() async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        for table in try await partitionedTables() {
            let rows = try await database.query("""
                SELECT partition_name, range_start, range_end, error
                FROM countersign_maintain_partitions(\(table)::text, \(monthsAhead)::int)
                """).rows
            for row in rows {
                let (partition, rangeStart, rangeEnd, error) = try row.decode((String, Date, Date, String?).self)
                let outcome = Outcome(table: table, partition: partition, rangeStart: rangeStart, rangeEnd: rangeEnd, error: error)
                var metadata: Logger.Metadata = ["table": "\(table)", "partition": "\(outcome.partition)",
                                                 "from": "\(outcome.rangeStart)", "to": "\(outcome.rangeEnd)"]
                if let error = outcome.error {
                    metadata["error"] = "\(error)"
                    logger.error("could not create partition; rows of that month go to the default partition until it exists",
                                 metadata: metadata)
                } else {
                    logger.info("created partition", metadata: metadata)
                }
                outcomes.append(outcome)
            }
        }
        return outcomes
    }

    /// ``run()`` after `firstRunAfter` (`.zero`: now), then every `interval` until the task is
    /// cancelled; after a run that failed or could not create a partition, the next one comes after
    /// `retry` instead. Failures are logged; nothing is thrown.
    public func runPeriodically(firstRunAfter: Duration = .zero, every interval: Duration = PartitionMaintenance.interval,
                                retry: Duration = PartitionMaintenance.retryInterval) async {
        var pause = firstRunAfter
        while !Task.isCancelled {
            do { try await Task.sleep(for: pause) } catch { return }
            pause = await runLoggingFailure() ? interval : min(retry, interval)
        }
    }

    /// ``run()``, logging instead of throwing when the database cannot be asked. True when every
    /// partition it tried to create was created.
    @discardableResult
    public func runLoggingFailure() async -> Bool {
        do {
            return try await run().allSatisfy { $0.error == nil }
        } catch {
            logger.error("partition maintenance failed; retrying at the next run", metadata: ["error": "\(error)"])
            return false
        }
    }
}
