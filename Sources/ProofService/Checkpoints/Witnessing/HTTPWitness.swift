import AsyncHTTPClient
import Foundation
import NIOCore

/// Posts a body to a URL with a per-attempt timeout and a few retries (AsyncHTTPClient's shared
/// client: its event loops, never the cooperative pool's threads, do the I/O). Used for the HTTP
/// witnesses (`CHECKPOINT_WITNESS_URLS`: the checkpoint's JSON) and the timestamp authority.
public struct HTTPWitness: Sendable {
    /// Where to post.
    public let url: String
    /// One attempt's deadline.
    public var timeout: TimeAmount
    /// Attempts in all (the first and the retries).
    public var attempts: Int
    /// Pause before retry `n` is `n` × this.
    public var backoff: Duration

    /// A witness at `url`.
    public init(url: String, timeout: TimeAmount = .seconds(10), attempts: Int = 3, backoff: Duration = .seconds(1)) {
        self.url = url
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff
    }

    /// Posts `body` as `contentType` until a 2xx answer, and returns that answer's body (at most
    /// `maxResponseBytes`); throws ``WitnessError/rejected(witness:reason:)`` naming the last failure.
    public func post(_ body: [UInt8], contentType: String, headers extra: [(String, String)] = [],
                     maxResponseBytes: Int = 1 << 20) async throws -> [UInt8] {
        var reason = "not attempted"
        for attempt in 1...attempts {
            if attempt > 1 { try await Task.sleep(for: backoff * (attempt - 1)) }
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: contentType)
            for (name, value) in extra { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: timeout)
                let answer = try await response.body.collect(upTo: maxResponseBytes)
                if (200..<300).contains(response.status.code) { return Array(answer.readableBytesView) }
                reason = "HTTP \(response.status.code)"
            } catch {
                reason = "\(error)"
            }
        }
        throw WitnessError.rejected(witness: url, reason: "\(attempts) attempts, last: \(reason)")
    }
}
