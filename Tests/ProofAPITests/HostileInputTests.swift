import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ProofAPI
import ProofService
import ProofStore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Hostile input: each case gets a clear 4xx (never a 5xx, never a hang) and the service stays
/// healthy afterwards. Gzip bombs, the 50,001-point limit and oversized proof bodies are covered in
/// ProofUploadTests (`gzipAndLimits`, `pointLimit`); DTD refusal inside the engine in the
/// SignatureKit parser tests. Cases that need the real HTTP parser (headers, request lines, static
/// files, slow clients) run against a live server on an ephemeral port over raw sockets.
@Suite("Hostile input", .needsDatabase)
struct HostileInputTests {
    /// The per-key rate limiter and the heavy-input CPU share out of the way: these tests send
    /// hundreds of requests, many of them near the limits, with one key, and a 429 or 503 must not
    /// stand in for the answer under test (the limiter and the shares have their own tests).
    static let unlimited: APIPolicy = {
        var policy = APIPolicy(rateLimitPerSecond: 0)
        policy.cpuHeavyShare = 64
        policy.cpuHeavyBurstSeconds = 3_600
        return policy
    }()

    // MARK: Bodies

    @Test("an oversized delivery body is 413 and creates nothing")
    func oversizedDeliveryBody() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let padding = String(repeating: "x", count: 70 * 1024)
                let body = Samples.deliveryJSON(reference: "BIG-1", address: padding)
                let response = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                        body: ByteBuffer(string: body))
                #expect(response.status == .contentTooLarge)
                #expect(response.problemCode == "body_too_large")
                let lookup = try await client.execute(uri: "/v1/deliveries/BIG-1", method: .get, headers: harness.headers(.admin))
                #expect(lookup.status == .notFound)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    @Test("deeply nested JSON is a 400 at every level it can appear (envelope, ink, signature_pad, delivery)")
    func deeplyNestedJSON() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
                let deepObject = String(repeating: #"{"a":"#, count: 50_000) + "1" + String(repeating: "}", count: 50_000)
                // Delivery bodies are limited to 64 KiB: nest as deep as fits.
                let deepSmall = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
                let deepObjectSmall = String(repeating: #"{"a":"#, count: 6_000) + "1" + String(repeating: "}", count: 6_000)
                let proofs = [
                    Samples.proofJSON().replacingOccurrences(of: #""device":"#, with: #""extra":\#(deep),"device":"#),
                    Samples.proofJSON().replacingOccurrences(of: #""device":"#, with: #""extra":\#(deepObject),"device":"#),
                    Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":200},"x":\#(deep),"strokes":[]}"#),
                    Samples.proofJSON(ink: #"[\#(deep)]"#, signatureMember: "signature_pad"),
                    Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":200},"strokes":\#(deep)}"#),
                ]
                for body in proofs {
                    let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                            headers: harness.headers(.courier), body: ByteBuffer(string: body))
                    #expect((400..<500).contains(response.status.code), "\(response.status) \(response.problemCode ?? "-")")
                    #expect(response.problemCode != nil)
                }
                for body in [deepSmall, deepObjectSmall, #"{"reference":"N-1","recipient":\#(deepSmall)}"#] {
                    let response = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                            body: ByteBuffer(string: body))
                    #expect(response.status == .badRequest, "\(response.status)")
                }
                try await Self.expectStillPending(client, harness, reference)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    @Test("InkML with a DTD (billion laughs, external entity, parameter entity) is 422 dtd_forbidden")
    func inkMLWithDTD() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let trace = "<trace>" + (0..<40).map { "\(60 + $0 * 10) \(100 + ($0 % 7) * 5)" }.joined(separator: ", ") + "</trace>"
                var laughs = #"<!ENTITY lol "lol">"#
                for level in 1...9 {
                    let previous = level == 1 ? "lol" : "lol\(level - 1)"
                    laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
                }
                let documents = [
                    #"<?xml version="1.0"?><!DOCTYPE lolz [\#(laughs)]><ink>\#(trace)<trace>&lol9;</trace></ink>"#,
                    #"<!DOCTYPE ink [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><ink>\#(trace)<trace>&xxe;</trace></ink>"#,
                    #"<!DOCTYPE ink [<!ENTITY % p SYSTEM "http://127.0.0.1:1/x.dtd"> %p;]><ink>\#(trace)</ink>"#,
                    #"<ink>\#(trace)<!ENTITY x "y"></ink>"#,
                ]
                for xml in documents {
                    let body = Samples.proofJSON(ink: Self.jsonString(xml), signatureMember: "inkml")
                    let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                            headers: harness.headers(.courier), body: ByteBuffer(string: body))
                    #expect(response.status == .unprocessableContent, "\(response.status)")
                    #expect(response.problemCode == "dtd_forbidden", "\(response.problemCode ?? "-")")
                }
                // Undeclared entities without a DTD are invalid XML, not expanded.
                let undeclared = Samples.proofJSON(ink: Self.jsonString("<ink>\(trace)<trace>&lol;</trace></ink>"), signatureMember: "inkml")
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: undeclared))
                #expect(response.status == .unprocessableContent)
                try await Self.expectStillPending(client, harness, reference)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    @Test("NaN, infinite and huge coordinates and locations are 4xx with a field, never stored")
    func nonFiniteAndHugeNumbers() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let good = Samples.inkJSON()
                let firstX = try #require(good.range(of: #"[[["#)).upperBound
                func withFirstX(_ value: String) -> String {
                    let end = good[firstX...].firstIndex(of: ",")!
                    return String(good[..<firstX]) + value + String(good[end...])
                }
                let pad = #"[{"points":[{"x":1e308,"y":10,"time":1},{"x":-1e308,"y":20,"time":2}]}]"#
                let cases: [(String, Set<Int>)] = [
                    (Samples.proofJSON(ink: withFirstX("NaN")), [400]),
                    (Samples.proofJSON(ink: withFirstX("Infinity")), [400]),
                    (Samples.proofJSON(ink: withFirstX("-Infinity")), [400]),
                    (Samples.proofJSON(ink: withFirstX("1e999")), [422]),
                    (Samples.proofJSON(ink: withFirstX("-1e999")), [422]),
                    (Samples.proofJSON(ink: withFirstX("1e308")), [422]),
                    (Samples.proofJSON(ink: withFirstX("1" + String(repeating: "0", count: 500))), [400, 422]),
                    // Underflows to 0, a valid coordinate: accepting it is correct.
                    (Samples.proofJSON(ink: withFirstX("0." + String(repeating: "0", count: 350) + "1")), [201, 400, 422]),
                    (Samples.proofJSON(ink: #"{"canvas":{"width":1e999,"height":200},"strokes":[[[1,1,0]]]}"#), [422]),
                    (Samples.proofJSON(ink: #"{"canvas":{"width":1e300,"height":1e300},"strokes":[[[1,1,0]]]}"#), [422]),
                    (Samples.proofJSON(ink: pad, signatureMember: "signature_pad"), [400, 422]),
                    (Samples.proofJSON(location: #"{"lat":NaN,"lon":13.4}"#), [400, 422]),
                    (Samples.proofJSON(location: #"{"lat":1e999,"lon":13.4}"#), [400, 422]),
                    (Samples.proofJSON(location: #"{"lat":52.5,"lon":13.4,"accuracy_m":1e308}"#), [201, 400, 422]),
                ]
                for (index, (body, allowed)) in cases.enumerated() {
                    let target = allowed.contains(201) ? try await harness.createDelivery(client) : reference
                    let response = try await client.execute(uri: "/v1/deliveries/\(target)/proof", method: .post,
                                                            headers: harness.headers(.courier), body: ByteBuffer(string: body))
                    #expect(allowed.contains(Int(response.status.code)), "case \(index): \(response.status) \(response.problemCode ?? "-")")
                    if response.status.code >= 400 { #expect(response.problemCode != nil, "case \(index)") }
                }
                try await Self.expectStillPending(client, harness, reference)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    @Test("10^6 points: 413 under the default limit, 422 (input_too_large / too_many_points) under a large one")
    func millionPoints() async throws {
        let points = (0..<1_000_000).map { i in "[\(i % 500),\(i % 100),\(i)]" }.joined(separator: ",")
        let body = Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":200},"strokes":[[\#(points)]]}"#)
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: body))
                #expect(response.status == .contentTooLarge)
                try await Self.expectStillPending(client, harness, reference)
            }
            try await harness.application(bodyLimit: 32 << 20, policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let response = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                        headers: harness.headers(.courier), body: ByteBuffer(string: body))
                #expect(response.status == .unprocessableContent)
                // 15 MB of ink is over the engine's 8 MiB input limit: refused on its size, before any point is parsed.
                #expect(response.problemCode == "input_too_large", "\(response.problemCode ?? "-")")
                // Also as signature_pad and gzip-compressed.
                let pad = "[" + (0..<1_000_000).map { i in #"{"x":\#(i % 500),"y":\#(i % 100),"time":\#(i)}"# }.prefix(60_000)
                    .joined(separator: ",") + "]"
                let padBody = Samples.proofJSON(ink: "[{\"points\":\(pad)}]", signatureMember: "signature_pad")
                    .replacingOccurrences(of: #""signature_pad":"#, with: #""canvas":{"width":600,"height":200},"signature_pad":"#)
                let padResponse = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                           headers: harness.headers(.courier), body: ByteBuffer(string: padBody))
                #expect(padResponse.status == .unprocessableContent)
                #expect(padResponse.problemCode == "too_many_points")
                let gzipped = Samples.gzip(Array(body.utf8))
                let zipped = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                      headers: harness.headers(.courier, [.contentEncoding: "gzip"]),
                                                      body: ByteBuffer(bytes: gzipped))
                #expect(zipped.status == .unprocessableContent)
                try await Self.expectStillPending(client, harness, reference)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    @Test("malformed UTF-8 in JSON bodies is 400 invalid_json (delivery fields, signer, InkML string)")
    func malformedUTF8Bodies() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let reference = try await harness.createDelivery(client)
                let sequences: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC0, 0xAF]]
                for bad in sequences {
                    func splice(_ text: String, at marker: String) -> [UInt8] {
                        let range = text.range(of: marker)!
                        return Array(text[..<range.upperBound].utf8) + bad + Array(text[range.upperBound...].utf8)
                    }
                    let delivery = splice(Samples.deliveryJSON(reference: "UTF-\(bad.count)"), at: #""name":"Ada"#)
                    let created = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                           body: ByteBuffer(bytes: delivery))
                    #expect(created.status == .badRequest, "delivery with \(bad): \(created.status)")
                    #expect(created.problemCode == "invalid_json")

                    let proof = splice(Samples.proofJSON(), at: #""signer":{"name":"Ada"#)
                    let uploaded = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                            headers: harness.headers(.courier), body: ByteBuffer(bytes: proof))
                    #expect((400..<500).contains(uploaded.status.code), "signer with \(bad): \(uploaded.status)")

                    let trace = (0..<40).map { "\(60 + $0 * 10) \(100 + ($0 % 7) * 5)" }.joined(separator: ", ")
                    let inkml = splice(Samples.proofJSON(ink: "\"<ink><!-- x --><trace>\(trace)</trace></ink>\"", signatureMember: "inkml"),
                                       at: "<!-- x")
                    let xml = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post,
                                                       headers: harness.headers(.courier), body: ByteBuffer(bytes: inkml))
                    #expect((400..<500).contains(xml.status.code), "InkML with \(bad): \(xml.status)")
                }
                try await Self.expectStillPending(client, harness, reference)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    // MARK: SQL injection

    static let injections = [
        "' OR '1'='1", "'; DROP TABLE proofs; --", "1) OR 1=1 --", "x' UNION SELECT token_sha256 FROM api_keys --",
        "\\'; SELECT pg_sleep(60); --", "$1", "%' OR 1=1 --", "\u{0}",
    ]

    @Test("SQL injection in every path and query parameter is a 4xx (or an empty page), tables intact")
    func sqlInjection() async throws {
        try await APITestHarness.with { harness in
            try await harness.application(policy: Self.unlimited).test(.router) { client in
                let delivered = try await harness.createDelivery(client)
                let upload = try await client.execute(uri: "/v1/deliveries/\(delivered)/proof", method: .post,
                                                      headers: harness.headers(.courier), body: ByteBuffer(string: Samples.proofJSON()))
                try #require(upload.status == .created)
                let pathTemplates = [
                    "/v1/deliveries/{x}", "/v1/deliveries/{x}/proof", "/v1/deliveries/{x}/proof/signature.png",
                    "/v1/deliveries/{x}/proof/signature.svg", "/v1/deliveries/{x}/proof/points",
                ]
                let queryTemplates = [
                    "/v1/deliveries?status={x}", "/v1/deliveries?since={x}", "/v1/deliveries?until={x}", "/v1/deliveries?bbox={x}",
                    "/v1/deliveries?near={x}", "/v1/deliveries?limit={x}", "/v1/deliveries?cursor={x}",
                    "/v1/audit/events?since={x}", "/v1/audit/events?until={x}", "/v1/audit/events?actor={x}",
                    "/v1/audit/events?action={x}", "/v1/audit/events?subject={x}", "/v1/audit/events?limit={x}",
                    "/v1/audit/events?cursor={x}",
                    "/v1/deliveries/\(delivered)/proof/signature.png?width={x}", "/v1/deliveries/\(delivered)/proof/signature.png?height={x}",
                    "/v1/deliveries/\(delivered)/proof/points?format={x}",
                ]
                var tried = 0
                for injection in Self.injections {
                    let encoded = injection.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    for template in pathTemplates + queryTemplates {
                        let uri = template.replacingOccurrences(of: "{x}", with: encoded)
                        let start = ContinuousClock.now
                        let response = try await client.execute(uri: uri, method: .get, headers: harness.headers(.admin))
                        tried += 1
                        #expect(response.status != .tooManyRequests, "\(uri): rate limited, not validated")
                        // An injected pg_sleep(60) that reached the database would hold the request for a minute; a busy
                        // machine can take seconds on an honest request, so the bound sits between the two.
                        #expect(ContinuousClock.now - start < .seconds(30), "\(uri) took long: pg_sleep reached the database?")
                        if response.status == .ok {
                            // Only a free-text filter may answer 200, and then with nothing in it.
                            #expect(template.contains("subject="), "\(uri): 200")
                            #expect((response.json["items"] as? [Any])?.isEmpty == true, "\(uri) matched rows")
                        } else {
                            #expect((400..<500).contains(response.status.code), "\(uri): \(response.status)")
                            #expect(response.problemCode != nil, "\(uri)")
                        }
                    }
                    // As a reference in a new delivery: refused by validation.
                    let created = try await client.execute(uri: "/v1/deliveries", method: .post, headers: harness.headers(.dispatcher),
                                                           body: ByteBuffer(string: Samples.deliveryJSON(reference: Self.jsonEscaped(injection))))
                    #expect(created.status == .unprocessableContent || created.status == .badRequest, "reference \(injection): \(created.status)")
                }
                #expect(tried == Self.injections.count * (pathTemplates.count + queryTemplates.count))
                // Everything is still there and the audit chain verifies.
                let list = try await client.execute(uri: "/v1/deliveries", method: .get, headers: harness.headers(.admin))
                #expect((list.json["items"] as? [Any])?.count == 1)
                let proof = try await client.execute(uri: "/v1/deliveries/\(delivered)/proof/points", method: .get,
                                                     headers: harness.headers(.admin))
                #expect(proof.status == .ok)
                let keys = try await client.execute(uri: "/v1/audit/events?action=key_created", method: .get, headers: harness.headers(.auditor))
                #expect((keys.json["items"] as? [Any])?.count == Role.allCases.count)
                try await Self.expectHealthy(client, harness)
            }
        }
    }

    // MARK: The HTTP layer (live server, raw sockets)

    @Test("oversized header fields, too many headers and a huge request line are 4xx; the server keeps serving")
    func oversizedHeaders() async throws {
        try await Self.withLiveServer { port, _ in
            let big = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\nConnection: close\r\n\r\n"
            let many = "GET /healthz HTTP/1.1\r\nHost: x\r\n" + (0..<3000).map { "X-H\($0): a\r\n" }.joined() + "Connection: close\r\n\r\n"
            let total = "GET /healthz HTTP/1.1\r\nHost: x\r\n" + (0..<40).map { "X-H\($0): \(String(repeating: "b", count: 4000))\r\n" }.joined()
                + "Connection: close\r\n\r\n"
            let line = "GET /healthz?\(String(repeating: "q", count: 200_000)) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let auth = "GET /v1/deliveries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(String(repeating: "t", count: 100_000))\r\n"
                + "Connection: close\r\n\r\n"
            for (name, request) in [("one big field", big), ("3000 fields", many), ("160 KB of fields", total), ("request line", line),
                                    ("huge bearer", auth)] {
                let answer = try await RawHTTP.perform(port: port, Array(request.utf8))
                #expect(answer.status.map { (400..<500).contains($0) } == true, "\(name): \(answer.statusLine)")
                #expect(try await RawHTTP.perform(port: port, RawHTTP.get("/healthz")).status == 200, "healthy after \(name)")
            }
        }
    }

    @Test("malformed UTF-8 and control bytes in the request line and headers are 4xx")
    func malformedUTF8RequestLine() async throws {
        try await Self.withLiveServer { port, _ in
            let requests: [[UInt8]] = [
                Array("GET /v1/deliveries/".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                Array("GET /v1/deliveries?status=".utf8) + [0xC3, 0x28] + Array(" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                Array("GET /v1/deliveries/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                Array("GET /healthz HTTP/1.1\r\nHost: x\r\nIdempotency-Key: ".utf8) + [0xFF, 0x01]
                    + Array("\r\nConnection: close\r\n\r\n".utf8),
                Array("GET /v1/deliveries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ".utf8) + [0xE2, 0x82]
                    + Array("\r\nConnection: close\r\n\r\n".utf8),
                Array("GET /healthz\0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
            ]
            for (index, request) in requests.enumerated() {
                let answer = try await RawHTTP.perform(port: port, request)
                // /healthz ignores the headers it does not read; everything else must be a 4xx.
                let acceptable = answer.status.map { (400..<500).contains($0) || (index == 3 && $0 == 200) } ?? false
                #expect(acceptable, "request \(index): \(answer.statusLine)")
                #expect(try await RawHTTP.perform(port: port, RawHTTP.get("/healthz")).status == 200)
            }
        }
    }

    @Test("path traversal on static files never leaves the public folder")
    func pathTraversal() async throws {
        try await Self.withLiveServer { port, publicDirectory in
            let secret = URL(fileURLWithPath: publicDirectory).deletingLastPathComponent().appendingPathComponent("secret.txt")
            try Data("TOP-SECRET-\(UInt32.random(in: 0...UInt32.max))".utf8).write(to: secret)
            let marker = try String(contentsOf: secret, encoding: .utf8)
            let index = try await RawHTTP.perform(port: port, RawHTTP.get("/"))
            #expect(index.status == 200, "the console itself is served: \(index.statusLine)")
            let paths = [
                "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/css/../../secret.txt", "/css/..%2f..%2fsecret.txt",
                "/..%5csecret.txt", "/%252e%252e/secret.txt", "/./../secret.txt", "//../secret.txt", "/.%2e/secret.txt",
                "/css/%2e%2e/%2e%2e/secret.txt", "/..;/secret.txt", "/%c0%ae%c0%ae/secret.txt", "/../../../../../../etc/passwd",
                "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
            ]
            for path in paths {
                let answer = try await RawHTTP.perform(port: port, RawHTTP.get(path))
                #expect(answer.status.map { (400..<500).contains($0) } == true, "\(path): \(answer.statusLine)")
                let text = String(decoding: answer.bytes, as: UTF8.self)
                #expect(!text.contains(marker) && !text.contains("root:x:0:0"), "\(path) leaked a file outside public/")
            }
            #expect(try await RawHTTP.perform(port: port, RawHTTP.get("/healthz")).status == 200)
        }
    }

    @Test("a client that stops mid-request is disconnected by the server after the idle timeout")
    func slowClients() async throws {
        try await Self.withLiveServer(idleTimeoutSeconds: 2) { port, _ in
            let partialHead = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8)
            let partialBody = Array("POST /v1/deliveries HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{".utf8)
            for request in [partialHead, partialBody] {
                // An early answer (401 before the body) is fine; the connection must still be closed.
                let answer = try await RawHTTP.perform(port: port, request, timeout: 90, untilClosed: true)
                #expect(answer.closedByServer, "the connection was still open after \(answer.seconds) s")
                #expect(answer.seconds < 10)
            }
        }
    }

    // MARK: Helpers

    /// The service answers normal requests and its audit chain verifies.
    static func expectHealthy(_ client: some TestClientProtocol, _ harness: APITestHarness) async throws {
        let list = try await client.execute(uri: "/v1/deliveries?limit=1", method: .get, headers: harness.headers(.courier))
        #expect(list.status == .ok, "healthy: \(list.status)")
        let verify = try await client.execute(uri: "/v1/audit/verify", method: .get, headers: harness.headers(.auditor))
        #expect(verify.json["status"] as? String == "ok", "audit chain after hostile input")
    }

    static func expectStillPending(_ client: some TestClientProtocol, _ harness: APITestHarness, _ reference: String) async throws {
        let delivery = try await client.execute(uri: "/v1/deliveries/\(reference)", method: .get, headers: harness.headers(.courier))
        #expect(delivery.json["status"] as? String == "pending", "\(reference) got a proof from hostile input")
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String { "\"" + jsonEscaped(text) + "\"" }

    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Runs `body` with the full router (console files from a temporary public folder) on a live port.
    static func withLiveServer(idleTimeoutSeconds: Int = 30, _ body: @escaping @Sendable (Int, String) async throws -> Void) async throws {
        try await withLiveServer(idleTimeoutSeconds: idleTimeoutSeconds) { port, publicDirectory, _ in try await body(port, publicDirectory) }
    }

    /// ``withLiveServer(idleTimeoutSeconds:_:)`` with the configuration adjusted by `configure`,
    /// handing `body` the harness too (its keys).
    static func withLiveServer(idleTimeoutSeconds: Int = 30, configure: @escaping @Sendable (inout ServiceConfiguration) -> Void = { _ in },
                               _ body: @escaping @Sendable (Int, String, APITestHarness) async throws -> Void) async throws {
        try await APITestHarness.with { harness in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UInt32.random(in: 0...UInt32.max))")
            let publicDirectory = root.appendingPathComponent("public")
            try FileManager.default.createDirectory(at: publicDirectory.appendingPathComponent("css"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try Data("<!doctype html><title>console</title>".utf8).write(to: publicDirectory.appendingPathComponent("index.html"))
            try Data("body{}".utf8).write(to: publicDirectory.appendingPathComponent("css/site.css"))
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            var configuration = ServiceConfiguration(databaseURL: harness.scratch.url, publicDirectory: publicDirectory.path,
                                                     dataDirectory: root.appendingPathComponent("data").path,
                                                     generateCheckpointKey: true, idleTimeoutSeconds: idleTimeoutSeconds)
            configure(&configuration)
            let router = CountersignApplication.router(configuration: configuration, database: harness.database, logger: logger,
                                                       dataKeys: TestDataKeys.provider)
            let app = Application(router: router, server: CountersignApplication.server(configuration: configuration),
                                  configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(.live) { client in
                let port = try #require(client.port)
                try await body(port, publicDirectory.path, harness)
            }
        }
    }
}

/// A minimal blocking HTTP/1.1 client over a raw socket: sends bytes exactly as given (invalid
/// UTF-8, oversized headers, partial requests) and reads until the server closes or the timeout.
enum RawHTTP {
    struct Answer: Sendable {
        var bytes: [UInt8]
        var closedByServer: Bool
        var seconds: Double

        var statusLine: String {
            let text = String(decoding: bytes.prefix(200), as: UTF8.self)
            let waited = "\((seconds * 10).rounded() / 10) s"
            return text.split(separator: "\r\n", maxSplits: 1).first.map(String.init)
                ?? (closedByServer ? "(no response; closed by the server after \(waited))" : "(no response in \(waited))")
        }

        /// The status code of the first response, if any arrived.
        var status: Int? {
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
            return Int(parts[1])
        }
    }

    struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    static func get(_ path: String) -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// ``exchange(port:_:timeout:)`` on a Dispatch thread: a blocking read on the cooperative pool
    /// (two threads on a two-core machine) could starve the very server it waits for.
    static func perform(port: Int, _ request: [UInt8], timeout: Double = 10, untilClosed: Bool = false) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try exchange(port: port, request, timeout: timeout, untilClosed: untilClosed) })
            }
        }
    }

    /// Sends `request` and reads the answer until EOF (server closed), a complete response with
    /// `Content-Length` (unless `untilClosed`), or `timeout` seconds without the server closing.
    /// A socket connected to 127.0.0.1:`port` (the caller closes it), with a receive buffer of
    /// `receiveBuffer` bytes when given (set before connecting, so the window is small from the start).
    static func connect(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(description: "socket() failed") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw SocketError(description: "connect() to \(port) failed")
        }
        return fd
    }

    static func exchange(port: Int, _ request: [UInt8], timeout: Double = 10, untilClosed: Bool = false) throws -> Answer {
        let fd = try connect(port: port)
        defer { close(fd) }
        var receiveTimeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receiveTimeout, socklen_t(MemoryLayout<timeval>.size))
        let start = ContinuousClock.now
        // The server may answer and close before reading everything: a failed send is not an error.
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var closed = false
        func seconds() -> Double {
            let d = ContinuousClock.now - start
            return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
        while seconds() < timeout {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { closed = true; break }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                closed = true  // reset by peer
                break
            }
            bytes += buffer[0..<n]
            if !untilClosed, isComplete(bytes) { break }
        }
        return Answer(bytes: bytes, closedByServer: closed, seconds: seconds())
    }

    /// True when `bytes` hold a whole response with a `Content-Length` body.
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let headEnd = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            return false
        }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return false }
        return bytes.count - (headEnd + 4) >= length
    }
}
