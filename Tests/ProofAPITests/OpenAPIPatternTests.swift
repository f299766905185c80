import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport
@testable import ProofAPI

/// The spec's `pattern`s against the server's own parsing (docs/reliability.md, finding 3): a
/// value the server refuses for its form must not match the documented pattern (or a schema-valid
/// request would get a 422), and a value that matches must be served. Each table row says what
/// both should do; the test asks both.
@Suite("OpenAPI patterns agree with the server", .needsDatabase)
struct OpenAPIPatternTests {
    /// The `pattern` of the parameter `name` under the first line containing `scope`, unescaped
    /// from YAML's double-quoted form. Fails when that parameter has no pattern.
    static func pattern(in scope: String, parameter name: String) throws -> String {
        let lines = try String(contentsOf: OpenAPISpecTests.specification, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.contains(scope) }),
              let nameLine = lines[start...].firstIndex(where: { $0.contains("name: \(name)") }) else {
            throw SpecError(text: "no parameter \(name) under \(scope)")
        }
        // A parameter's schema is on its `name:` line (flow style) or within the next three lines.
        for line in lines[nameLine..<min(nameLine + 4, lines.endIndex)] {
            if line != lines[nameLine], line.contains("name:") { break }
            if let range = line.range(of: #"pattern: ""#) {
                let rest = line[range.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { break }
                return rest[..<end].replacingOccurrences(of: #"\\"#, with: #"\"#)
            }
        }
        throw SpecError(text: "parameter \(name) under \(scope) has no pattern")
    }

    struct SpecError: Error, CustomStringConvertible { let text: String; var description: String { text } }

    static func matches(_ pattern: String, _ value: String) throws -> Bool {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
    }

    @Test("bbox, near and cursor: the list routes serve exactly what their patterns allow")
    func listParameters() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                try await harness.createDelivery(client, reference: "P-1")
                try await harness.createDelivery(client, reference: "P-2")
                let first = try await client.execute(uri: "/v1/deliveries?limit=1", method: .get, headers: harness.headers(.auditor))
                let cursor = try #require(first.json["next_cursor"] as? String)

                let badCursors = ["a+b", "a b", "a.b", "c1.5", String(repeating: "A", count: 65)]
                let table: [(path: String, scope: String, parameter: String, served: [String], refused: [String])] = [
                    ("/v1/deliveries", "  /v1/deliveries:", "bbox",
                     ["179,-19,-179,-16", "13,52,14,53", "-180,-90,180,90", "1e1,0,20,1.5", "-0.5,-1E-1,0.25,2"],
                     ["1,2,3", "1,2,3,4,5", "a,b,c,d", "1,,3,4", "1;2;3;4", "nan,0,1,1", "inf,0,1,1", "", "1,2,3,4,"]),
                    ("/v1/deliveries", "  /v1/deliveries:", "near",
                     ["52.52,13.40,5000", "-33.9,151.2,1", "0,0,2e3"],
                     ["1,2", "52,13,-5", "52,13,abc", "52,13,", "nan,1,1", "1,2,3,4"]),
                    ("/v1/deliveries", "  /v1/deliveries:", "cursor", [cursor], badCursors),
                    ("/v1/audit/events", "  /v1/audit/events:", "cursor", [cursor], badCursors),
                ]
                for row in table {
                    let pattern = try Self.pattern(in: row.scope, parameter: row.parameter)
                    for (value, served) in row.served.map({ ($0, true) }) + row.refused.map({ ($0, false) }) {
                        let uri = "\(row.path)?\(row.parameter)=\(PagedListQuery.percentEncode(value))"
                        let status = try await client.execute(uri: uri, method: .get, headers: harness.headers(.auditor)) { $0.status }
                        #expect(try Self.matches(pattern, value) == served, "\(row.path) \(row.parameter)=\(value): pattern \(pattern)")
                        #expect(status == (served ? .ok : .unprocessableContent), "\(uri) gave \(status)")
                    }
                }
            }
        }
    }

    @Test("reference: a delivery is created exactly when the reference matches the pattern")
    func reference() async throws {
        let pattern = try Self.pattern(in: "    Reference:", parameter: "reference")
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let served = ["TRK-1", "a", "A.b_c:d-e", "0", String(repeating: "x", count: 64)]
                let refused = ["-abc", ".a", "_a", ":a", "", "a b", "a/b", "ä", String(repeating: "x", count: 65)]
                for (value, ok) in served.map({ ($0, true) }) + refused.map({ ($0, false) }) {
                    let response = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                            body: ByteBuffer(string: Samples.deliveryJSON(reference: value)))
                    #expect(try Self.matches(pattern, value) == ok, "reference \(value): pattern \(pattern)")
                    #expect(response.status == (ok ? .created : .unprocessableContent), "reference \(value) gave \(response.status)")
                }
            }
        }
    }
}
