import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ProofService
import ProofStore
import Testing
import TestSupport
@testable import ProofAPI

/// Issue 20's findings, each as a regression test: security headers, control characters in
/// paths, stored originals served as downloads of a fixed type, bodies that never finish, and
/// clients without a valid key.
@Suite("Hostile clients", .needsDatabase)
struct HostileClientTests {
    @Test("every response carries the security headers; /v1 answers are not cached, stored images stay privately cacheable")
    func securityHeaders() async throws {
        try await HostileInputTests.withLiveServer(configure: { $0.hstsMaxAgeSeconds = 31_536_000 }) { port, _, harness in
            let token = harness.tokens[.dispatcher]!
            for path in ["/healthz", "/index.html", "/v1/session", "/v1/deliveries/NOPE-1", "/no-such-file"] {
                let answer = try await RawHTTP.perform(port: port, Array(
                    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n".utf8))
                let head = answer.head
                #expect(head["content-security-policy"]?.contains("frame-ancestors 'none'") == true, "\(path)")
                #expect(head["x-content-type-options"] == "nosniff", "\(path)")
                #expect(head["x-frame-options"] == "DENY", "\(path)")
                #expect(head["referrer-policy"] == "no-referrer", "\(path)")
                #expect(head["strict-transport-security"] == "max-age=31536000", "\(path)")
                if path.hasPrefix("/v1/") { #expect(head["cache-control"] == "no-store", "\(path)") }
            }
        }
    }

    @Test("a privately cacheable proof image varies by Authorization, so no cache hands one key's image to another")
    func privateAnswersVaryByAuthorization() async throws {
        try await HostileInputTests.withLiveServer { port, _, harness in
            let reference = try await harness.application().test(.router) { client in
                try await harness.createDeliveryWithProof(client).reference
            }
            let token = harness.tokens[.dispatcher]!
            let answer = try await RawHTTP.perform(port: port, Array(
                "GET /v1/deliveries/\(reference)/proof/signature.png HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n".utf8))
            #expect(answer.status == 200)
            #expect(answer.head["cache-control"]?.contains("private") == true)
            #expect(answer.head["vary"]?.contains("Authorization") == true, "\(answer.head)")
        }
    }

    @Test("a path with a raw or percent-encoded control character is 400 invalid_path, never a file")
    func controlCharactersInPaths() async throws {
        try await HostileInputTests.withLiveServer { port, _ in
            for path in ["/index.html%00.js", "/index.html%0a", "/css/site.css%7F", "/v1/deliveries/A%00B"] {
                let answer = try await RawHTTP.perform(port: port, RawHTTP.get(path))
                #expect(answer.status == 400, "\(path): \(answer.statusLine)")
                #expect(answer.head["content-type"] == "application/problem+json", "\(path)")
                #expect(String(decoding: answer.bytes, as: UTF8.self).contains("invalid_path"), "\(path)")
            }
            #expect(try await RawHTTP.perform(port: port, RawHTTP.get("/index.html")).status == 200)
        }
    }

    @Test("the original body and the InkML are downloads of a fixed type, whatever Content-Type the uploader sent")
    func originalsAreAttachments() async throws {
        try await APITestHarness.with { harness in
            try await harness.application().test(.router) { client in
                let reference = try await harness.createDelivery(client)
                var headers = harness.headers(.courier)
                headers[.contentType] = "application/vnd.evil+json; charset=utf-8"
                let upload = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .post, headers: headers,
                                                      body: ByteBuffer(string: Samples.proofJSON()))
                try #require(upload.status == .created)
                let original = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/points", method: .get,
                                                        headers: harness.headers(.auditor))
                #expect(original.status == .ok)
                #expect(original.headers[.contentType] == "application/json")
                #expect(original.headers[.contentDisposition] == "attachment; filename=\"\(reference)-points.json\"")
                let inkml = try await client.execute(uri: "/v1/deliveries/\(reference)/proof/points?format=inkml", method: .get,
                                                     headers: harness.headers(.auditor))
                #expect(inkml.status == .ok)
                #expect(inkml.headers[.contentType] == "application/inkml+xml")
                #expect(inkml.headers[.contentDisposition] == "attachment; filename=\"\(reference)-points.inkml\"")
                let metadata = try await client.execute(uri: "/v1/deliveries/\(reference)/proof", method: .get,
                                                        headers: harness.headers(.dispatcher))
                #expect(String(buffer: metadata.body).contains("application/vnd.evil+json; charset=utf-8"),
                        "the metadata still records the type as sent")
            }
        }
    }

    @Test("a 401 answered before the body arrived closes the connection instead of reading the rest")
    func unauthorizedClosesTheConnection() async throws {
        try await HostileInputTests.withLiveServer { port, _ in
            // The head promises 100 kB; ten bytes follow and the client keeps the socket open.
            let request = Array(("POST /v1/deliveries/A-1/proof HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer cs_nope\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"signer\":").utf8)
            let answer = try await RawHTTP.perform(port: port, request, timeout: 10, untilClosed: true)
            #expect(answer.status == 401)
            #expect(answer.head["connection"] == "close")
            #expect(answer.closedByServer, "the server closed the connection (after \(answer.seconds) s)")
        }
    }

    @Test("once heavy inputs have spent their CPU share, a large upload is 503 busy before its body is read and a re-render of many points waits; ordinary ones go on")
    func heavyShareRefusesBeforeTheBody() async throws {
        try await HostileInputTests.withLiveServer(configure: {
            $0.policy.cpuHeavyShare = 0.01
            $0.policy.cpuHeavyBurstSeconds = 0.000_001  // the first heavy job spends it
        }) { port, _, harness in
            func send(_ method: String, _ path: String, _ role: Role, _ body: String = "", declaring length: Int? = nil) async throws -> RawHTTP.Answer {
                let bytes = Array(body.utf8)
                let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(harness.tokens[role]!)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(length ?? bytes.count)\r\n\r\n"
                // A hang guard: the first upload renders 5,100 points on a nice-10 thread, which a
                // loaded CI machine running the debug build and every other suite can starve for seconds.
                return try await RawHTTP.perform(port: port, Array(head.utf8) + bytes, timeout: 120, untilClosed: length != nil)
            }
            for reference in ["COMPACT-1", "HEAVY-2", "LIGHT-1"] {
                #expect(try await send("POST", "/v1/deliveries", .dispatcher, Samples.deliveryJSON(reference: reference)).status == 201)
            }
            // 5,100 points in under 64 KiB (timestamps need not grow): a small body, but heavy to render.
            let strokes = (0..<17).map { s in "[" + (0..<300).map { i in "[\(100 + i),\(100 + s * 15 + i % 7),0]" }.joined(separator: ",") + "]" }
            let compact = Samples.proofJSON(ink: #"{"canvas":{"width":600,"height":400},"strokes":["# + strokes.joined(separator: ",") + "]}")
            #expect(compact.utf8.count < ProofIntake.heavyBytes)
            let first = try await send("POST", "/v1/deliveries/COMPACT-1/proof", .courier, compact)
            #expect(first.status == 201, "\(first.statusLine)")
            // Its render was heavy work and spent the share: re-rendering those 5,100 points is heavy work too.
            let resize = try await send("GET", "/v1/deliveries/COMPACT-1/proof/signature.png?width=300", .courier)
            #expect(resize.status == 503, "\(resize.statusLine)")
            // A heavy upload: its head promises the whole body, a few bytes follow and the client waits.
            let refused = try await send("POST", "/v1/deliveries/HEAVY-2/proof", .courier, "{\"signer\":", declaring: 100_000)
            #expect(refused.status == 503, "\(refused.statusLine)")
            #expect(String(decoding: refused.bytes, as: UTF8.self).contains("\"busy\""))
            #expect(refused.head["retry-after"].flatMap { Int($0) }.map { $0 >= 1 } == true)
            #expect(refused.head["connection"] == "close")
            #expect(refused.closedByServer, "the server closed the connection instead of reading the body (after \(refused.seconds) s)")
            // Declared over BODY_LIMIT it is still 413 first, and a wrong type still 415.
            #expect(try await send("POST", "/v1/deliveries/HEAVY-2/proof", .courier, "{", declaring: 2 << 20).status == 413)
            // The same courier's ordinary signature is not heavy work: stored as ever.
            #expect(try await send("POST", "/v1/deliveries/LIGHT-1/proof", .courier, Samples.proofJSON()).status == 201)
            let stored = try await harness.database.query(
                "SELECT count(*) FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference IN ('COMPACT-1', 'HEAVY-2', 'LIGHT-1')")
            #expect(try stored.decode(Int.self, row: 0, column: 0) == 2, "nothing stored for the refused upload")
        }
    }

    @Test("a body that never finishes is cut at REQUEST_TIMEOUT_SECONDS, even from a valid key")
    func slowBodyIsCutAtTheDeadline() async throws {
        try await HostileInputTests.withLiveServer(configure: { $0.requestTimeoutSeconds = 2 }) { port, _, harness in
            let request = Array(("POST /v1/deliveries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(harness.tokens[.dispatcher]!)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"reference\":").utf8)
            // The idle timeout (30 s) would not fire before the client's 20 s: only the deadline can close it.
            let answer = try await RawHTTP.perform(port: port, request, timeout: 20, untilClosed: true)
            #expect(answer.closedByServer)
            #expect(answer.seconds < 15, "closed after \(answer.seconds) s")
        }
    }

    @Test("failed authentications are limited per client address, before the database; a valid key still passes")
    func failedAuthenticationsAreLimited() async throws {
        try await HostileInputTests.withLiveServer(configure: { $0.policy.authenticationFailureBurst = 3
            $0.policy.authenticationFailureRatePerSecond = 0.01 }) { port, _, harness in
            var statuses: [Int] = []
            for attempt in 0..<6 {
                let answer = try await RawHTTP.perform(port: port, Array(
                    "GET /v1/session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer cs_unknown\(attempt)\r\nConnection: close\r\n\r\n".utf8))
                statuses.append(answer.status ?? 0)
                if answer.status == 429 { #expect(Int(answer.head["retry-after"] ?? "") ?? 0 >= 1) }
            }
            #expect(statuses == [401, 401, 401, 429, 429, 429])
            // The valid key's first look-up is not cached yet, so it is refused while the address is limited...
            let blocked = try await RawHTTP.perform(port: port, Array(
                "GET /v1/session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(harness.tokens[.courier]!)\r\nConnection: close\r\n\r\n".utf8))
            #expect(blocked.status == 429)
        }
    }

    @Test("a token found unknown is refused again without a database look-up")
    func unknownTokensAreRemembered() {
        let guardian = AuthenticationFailureGuard(ratePerSecond: 1, burst: 100, unknownTokenTTL: .seconds(60))
        let hash = APIKeyRepository.hash("cs_unknown")
        #expect(!guardian.isKnownUnknown(hash))
        guardian.recordFailure("127.0.0.1", unknownTokenHash: hash)
        #expect(guardian.isKnownUnknown(hash))
        #expect(!guardian.isKnownUnknown(APIKeyRepository.hash("cs_other")))
        #expect(guardian.retryAfter(nil) == nil, "no address, nothing to limit")
    }
}

extension RawHTTP.Answer {
    /// The first response's header fields, names lower-cased.
    var head: [String: String] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return [:] }
        var fields: [String: String] = [:]
        for line in text[..<end.lowerBound].split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}
