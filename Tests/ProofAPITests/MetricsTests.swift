import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Postgres
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport

/// One scrape of `/metrics`, parsed: sample lines by name and label set.
struct MetricsScrape {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var samples: [Sample] = []
    var text: String

    init(_ text: String) {
        self.text = text
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let brace = series.firstIndex(of: "{") {
                name = String(series[..<brace])
                let body = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                // Label values here never contain `",` so splitting on it is exact.
                for pair in body.components(separatedBy: "\",") {
                    guard let equals = pair.firstIndex(of: "=") else { continue }
                    labels[String(pair[..<equals])] = String(pair[pair.index(after: equals)...]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
    }

    /// The value of the one sample called `name` with exactly `labels`; 0 when the series does not exist yet.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        let matches = samples.filter { $0.name == name && $0.labels == labels }
        precondition(matches.count <= 1, "\(name)\(labels) matches \(matches.count) samples")
        return matches.first?.value ?? 0
    }

    /// Label values of `label` over every sample called `name`.
    func labelValues(_ name: String, _ label: String) -> Set<String> {
        Set(samples.filter { $0.name == name }.compactMap { $0.labels[label] })
    }
}

@Suite("Metrics", .needsDatabase)
struct MetricsTests {
    /// The full application (`CountersignApplication.router`) over the harness's database with its own registry.
    static func application(_ harness: APITestHarness, metrics: CountersignMetrics?) -> some ApplicationProtocol {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ServiceConfiguration(databaseURL: harness.scratch.url)
        return Application(router: CountersignApplication.router(configuration: configuration, database: harness.database,
                                                                 logger: logger, metrics: metrics, dataKeys: TestDataKeys.provider),
                           configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
    }

    static func scrape(_ client: some TestClientProtocol) async throws -> MetricsScrape {
        let response = try await client.execute(uri: "/metrics", method: .get)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        return MetricsScrape(String(buffer: response.body))
    }

    static let requests = "countersign_http_requests_total"
    static let latencyCount = "countersign_http_request_duration_seconds_count"

    @Test("request count and latency per method, route template and status grow by exactly the requests made")
    func requestCounts() async throws {
        try await APITestHarness.with { harness in
            try await Self.application(harness, metrics: CountersignMetrics()).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let before = try await Self.scrape(client)
                for _ in 0..<3 {
                    let ok = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.dispatcher))
                    #expect(ok.status == .ok)
                }
                for index in 0..<2 {
                    let missing = try await client.execute(uri: "/v1/deliveries/NOPE-\(index)", method: .get, headers: harness.headers(.dispatcher))
                    #expect(missing.status == .notFound)
                }
                let anonymous = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get)
                #expect(anonymous.status == .unauthorized)
                let unmatched = try await client.execute(uri: "/no/such/route-\(reference)", method: .get)
                #expect(unmatched.status == .notFound)
                let custom = try await client.execute(uri: "/healthz", method: HTTPRequest.Method("BREW")!)
                #expect(custom.status == .notFound)
                let after = try await Self.scrape(client)

                let route = "/v1/deliveries/{reference}"
                func delta(_ name: String, _ labels: [String: String]) -> Double { after.value(name, labels) - before.value(name, labels) }
                for (status, count) in [("200", 3.0), ("404", 2), ("401", 1)] {
                    let labels = ["method": "GET", "route": route, "status": status]
                    #expect(delta(Self.requests, labels) == count, "\(labels)")
                    #expect(delta(Self.latencyCount, labels) == count, "\(labels)")
                }
                #expect(delta(Self.requests, ["method": "GET", "route": "unmatched", "status": "404"]) == 1)
                #expect(delta(Self.requests, ["method": "OTHER", "route": "unmatched", "status": "404"]) == 1)
                // The scrape before counts in the one after; the delivery creation before `before` does not change.
                #expect(delta(Self.requests, ["method": "GET", "route": "/metrics", "status": "200"]) == 1)
                #expect(delta(Self.requests, ["method": "POST", "route": "/v1/deliveries", "status": "201"]) == 0)
                #expect(after.value(Self.requests, ["method": "POST", "route": "/v1/deliveries", "status": "201"]) == 1)
                // Raw paths never become labels: no reference, no unmatched path, no custom method.
                #expect(!after.text.contains(reference))
                #expect(!after.text.contains("BREW"))
                #expect(after.labelValues(Self.requests, "route").isSubset(of: [route, "unmatched", "/metrics", "/v1/deliveries"]))
                // Every latency observation lands in some bucket: +Inf equals the count.
                let labels = ["method": "GET", "route": route, "status": "200"]
                var infinity = labels
                infinity["le"] = "+Inf"
                #expect(after.value("countersign_http_request_duration_seconds_bucket", infinity) == after.value(Self.latencyCount, labels))
                #expect(after.value("countersign_http_request_duration_seconds_sum", labels) > 0)
            }
        }
    }

    @Test("a proof upload counts a stored proof, its PNG size and one render; a resized PNG counts a resize render")
    func proofMetrics() async throws {
        try await APITestHarness.with { harness in
            try await Self.application(harness, metrics: CountersignMetrics()).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let before = try await Self.scrape(client)
                #expect(before.value("countersign_proofs_stored_total") == 0)
                #expect(before.text.contains("# HELP countersign_proofs_stored_total "))

                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                #expect(upload.status == .created)
                let png = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png", method: .get,
                                                   headers: harness.headers(.auditor))
                #expect(png.status == .ok)
                // A refused second upload (409) stores nothing.
                let again = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                     headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                #expect(again.status == .conflict)
                let middle = try await Self.scrape(client)

                #expect(middle.value("countersign_proofs_stored_total") == 1)
                #expect(middle.value("countersign_png_bytes_count") == 1)
                #expect(middle.value("countersign_png_bytes_sum") == Double(png.bytes.count))
                let upload1 = ["purpose": "upload"]
                #expect(middle.value("countersign_signature_render_duration_seconds_count", upload1) == 1)
                #expect(middle.value("countersign_png_encode_duration_seconds_count", upload1) == 1)
                #expect(middle.value("countersign_signature_render_duration_seconds_sum", upload1) > 0)
                #expect(middle.value("countersign_png_encode_duration_seconds_sum", upload1) > 0)
                #expect(middle.value("countersign_signature_render_duration_seconds_count", ["purpose": "resize"]) == 0)
                #expect(middle.value(Self.requests, ["method": "POST", "route": "/v1/deliveries/{reference}/proof", "status": "201"]) == 1)
                #expect(middle.value(Self.requests, ["method": "POST", "route": "/v1/deliveries/{reference}/proof", "status": "409"]) == 1)

                let resized = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/signature.png?width=300", method: .get,
                                                       headers: harness.headers(.auditor))
                #expect(resized.status == .ok)
                let after = try await Self.scrape(client)
                #expect(after.value("countersign_signature_render_duration_seconds_count", ["purpose": "resize"]) == 1)
                #expect(after.value("countersign_png_encode_duration_seconds_count", ["purpose": "resize"]) == 1)
                #expect(after.value("countersign_proofs_stored_total") == 1)
                #expect(after.value("countersign_png_bytes_count") == 1)
            }
        }
    }

    @Test("pool gauges and the wait counter follow the pool")
    func poolMetrics() async throws {
        try await APITestHarness.with(poolSize: 2) { harness in
            try await Self.application(harness, metrics: CountersignMetrics()).test(.router) { client in
                let first = try await Self.scrape(client)
                #expect(first.value("countersign_db_pool_capacity") == 2)
                #expect(first.value("countersign_db_pool_waiting") == 0)
                #expect(first.value("countersign_db_pool_connections", ["state": "in_use"]) == 0)
                let waitsBefore = first.value("countersign_db_pool_waits_total")

                // Lease both connections, then make a third caller wait for one.
                let (leased, release) = AsyncStream.makeStream(of: Void.self)
                let gates = (0..<2).map { _ in AsyncStream.makeStream(of: Void.self) }
                let database = harness.database
                let holders = Task {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for gate in gates {
                            group.addTask {
                                try await database.withConnection { _ in
                                    release.yield()
                                    for await _ in gate.stream { break }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                var iterator = leased.makeAsyncIterator()
                _ = await iterator.next()
                _ = await iterator.next()
                let held = try await Self.scrape(client)
                #expect(held.value("countersign_db_pool_connections", ["state": "in_use"]) == 2)
                #expect(held.value("countersign_db_pool_connections", ["state": "idle"]) == 0)

                let waiter = Task { _ = try await database.query("SELECT 1") }
                var waiting = 0.0
                for _ in 0..<200 where waiting == 0 {
                    try await Task.sleep(for: .milliseconds(5))
                    waiting = try await Self.scrape(client).value("countersign_db_pool_waiting")
                }
                #expect(waiting == 1)
                for gate in gates { gate.continuation.finish() }
                try await holders.value
                _ = try await waiter.value
                let after = try await Self.scrape(client)
                #expect(after.value("countersign_db_pool_waits_total") - waitsBefore == 1)
                #expect(after.value("countersign_db_pool_waiting") == 0)
                #expect(after.value("countersign_db_pool_connections", ["state": "in_use"]) == 0)
                #expect(after.value("countersign_db_pool_connections", ["state": "idle"]) == 2)
            }
        }
    }

    @Test("malloc gauges follow a large block held and freed (glibc)")
    func allocatorMetrics() async throws {
        #if canImport(Glibc)
        // On glibc the figures must be there (elsewhere the gauges stay 0 by design).
        _ = try #require(AllocatorSnapshot.now())
        #else
        guard AllocatorSnapshot.now() != nil else { return }
        #endif
        try await APITestHarness.with { harness in
            try await Self.application(harness, metrics: CountersignMetrics()).test(.router) { client in
                // 1 GiB: far above malloc's mmap threshold, so it gets its own mapping, and far above
                // what the other suites, running at the same time in this process, allocate between the
                // two scrapes (256 MiB was not: a clean run once saw 170 MiB come and go in between).
                // Its pages are never touched, so it costs address space, not memory.
                let size = 1 << 30
                let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
                let held = try await Self.scrape(client)
                block.deallocate()
                let freed = try await Self.scrape(client)
                let inUse = ["state": "in_use"], mmapped = ["state": "mmapped"]
                #expect(held.value("countersign_malloc_bytes", mmapped) >= Double(size))
                #expect(held.value("countersign_malloc_bytes", inUse) >= held.value("countersign_malloc_bytes", mmapped))
                #expect(held.value("countersign_malloc_bytes", mmapped) - freed.value("countersign_malloc_bytes", mmapped) >= Double(size / 2))
                #expect(held.value("countersign_malloc_bytes", inUse) - freed.value("countersign_malloc_bytes", inUse) >= Double(size / 2))
                #expect(freed.labelValues("countersign_malloc_bytes", "state") == ["in_use", "free", "mmapped"])
            }
        }
    }

    @Test("audit verification outcomes are counted on the current request's metrics")
    func auditVerifications() async throws {
        try await APITestHarness.with { harness in
            let metrics = CountersignMetrics()
            let outcome = try await AuditVerifier(database: harness.database, dataKeys: TestDataKeys.provider).verify()
            // Outside a request nothing is counted and the result passes through.
            #expect(CountersignMetrics.observe(outcome) == outcome)
            let broken = AuditVerification.broken(AuditBreak(seq: 7, kind: .gap, expected: "7", found: "8"))
            CountersignMetrics.$current.withValue(metrics) {
                _ = CountersignMetrics.observe(outcome)
                _ = CountersignMetrics.observe(outcome)
                _ = CountersignMetrics.observe(broken)
            }
            let scrape = MetricsScrape(String(decoding: metrics.exposition(), as: UTF8.self))
            guard case .ok = outcome else { Issue.record("a fresh database should verify: \(outcome)"); return }
            #expect(scrape.value("countersign_audit_verifications_total", ["result": "ok"]) == 2)
            #expect(scrape.value("countersign_audit_verifications_total", ["result": "gap"]) == 1)
            #expect(scrape.value("countersign_audit_verifications_total", ["result": "hash_mismatch"]) == 0)
            #expect(scrape.labelValues("countersign_audit_verifications_total", "result").contains("proof_missing"))
        }
    }

    @Test("two applications count separately, and metrics: nil serves no /metrics")
    func isolationAndDisabled() async throws {
        try await APITestHarness.with { harness in
            let one = CountersignMetrics(), two = CountersignMetrics()
            try await Self.application(harness, metrics: one).test(.router) { client in
                _ = try await client.execute(uri: "/healthz", method: .get)
            }
            try await Self.application(harness, metrics: two).test(.router) { client in
                for _ in 0..<2 { _ = try await client.execute(uri: "/healthz", method: .get) }
            }
            let healthz = ["method": "GET", "route": "/healthz", "status": "200"]
            #expect(MetricsScrape(String(decoding: one.exposition(), as: UTF8.self)).value(Self.requests, healthz) == 1)
            #expect(MetricsScrape(String(decoding: two.exposition(), as: UTF8.self)).value(Self.requests, healthz) == 2)

            try await Self.application(harness, metrics: nil).test(.router) { client in
                let response = try await client.execute(uri: "/metrics", method: .get)
                #expect(response.status == .notFound)
            }
        }
    }

    @Test("METRICS_ENABLED: default on, accepts true/false spellings, rejects anything else")
    func enabledSetting() throws {
        #expect(try CountersignMetrics.isEnabled(environment: [:]))
        #expect(try CountersignMetrics.isEnabled(environment: ["METRICS_ENABLED": " "]))
        #expect(try CountersignMetrics.isEnabled(environment: ["METRICS_ENABLED": "yes"]))
        #expect(try !CountersignMetrics.isEnabled(environment: ["METRICS_ENABLED": "false"]))
        #expect(try !CountersignMetrics.isEnabled(environment: ["METRICS_ENABLED": "0"]))
        #expect(throws: ConfigurationError.self) { try CountersignMetrics.isEnabled(environment: ["METRICS_ENABLED": "maybe"]) }
    }
}
