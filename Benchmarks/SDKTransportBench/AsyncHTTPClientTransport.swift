import AsyncHTTPClient
import CountersignClient
import Foundation
import NIOCore
import NIOHTTP1

/// The peer of ``URLSessionTransport`` in this benchmark: the same ``HTTPTransport`` over
/// AsyncHTTPClient (SwiftNIO), the other candidate for the SDK on Linux.
struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient

    func send(_ request: HTTPRequestData) async throws(CountersignClientError) -> HTTPResponseData {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await client.execute(outgoing, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 16 << 20)
            var headers: [String: String] = [:]
            for header in response.headers { headers[header.name.lowercased()] = header.value }
            return HTTPResponseData(status: Int(response.status.code), headers: headers, body: Array(buffer: body))
        } catch {
            throw .transport(String(describing: error))
        }
    }
}
