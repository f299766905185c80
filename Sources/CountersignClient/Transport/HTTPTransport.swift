import Foundation

/// One HTTP exchange, without retries: the seam between the SDK's logic and the network, so
/// retry decisions are tested without a network and an app can bring its own stack.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status. Throws only when no answer
    /// arrived (``CountersignClientError/transport(_:)``).
    func send(_ request: HTTPRequestData) async throws(CountersignClientError) -> HTTPResponseData
}

/// A request as the SDK builds it.
public struct HTTPRequestData: Sendable, Equatable {
    public var method: String
    public var url: URL
    /// Header names as the SDK writes them (`Content-Type`, `Idempotency-Key`, …).
    public var headers: [String: String]
    public var body: [UInt8]?

    public init(method: String, url: URL, headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An answer: status, headers (names lower-cased), body.
public struct HTTPResponseData: Sendable, Equatable {
    public var status: Int
    /// Lower-cased names (HTTP names are case-insensitive).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// A header by name, case-insensitively.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
