import AsyncHTTPClient
import Foundation
import NIOCore

/// What a receiver answered.
public struct WebhookResponse: Sendable, Equatable {
    public var status: Int
    /// The `Retry-After` header, as sent.
    public var retryAfter: String?

    public init(status: Int, retryAfter: String?) {
        self.status = status
        self.retryAfter = retryAfter
    }
}

/// Posts one signed webhook. The sender is written against this so tests can count posts, but
/// the tests of this repository post to real loopback receivers through ``HTTPWebhookTransport``.
public protocol WebhookTransport: Sendable {
    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> WebhookResponse
    /// Releases connections; called once when the sender stops.
    func shutdown() async throws
}

/// AsyncHTTPClient on NIO's shared event loops: no redirects (a redirect could lead to an address
/// the guard refused), the whole attempt bounded by its deadline, at most 64 KiB of the answer
/// read (and ignored: only the status counts).
public final class HTTPWebhookTransport: WebhookTransport {
    let client: HTTPClient

    public init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.httpVersion = .http1Only
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> WebhookResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let deadline = NIODeadline.now() + .nanoseconds(nanoseconds)
        let response = try await client.execute(request, deadline: deadline)
        var read = 0
        for try await chunk in response.body {
            read += chunk.readableBytes
            if read > 64 * 1024 { break }
        }
        return WebhookResponse(status: Int(response.status.code), retryAfter: response.headers.first(name: "retry-after"))
    }

    /// Closes the client's connections (once, when the sender stops).
    public func shutdown() async throws {
        try await client.shutdown()
    }
}
