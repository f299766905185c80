import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over `URLSession`: the system's stack on iOS/macOS (proxies, cellular
/// policy, App Transport Security), libcurl through FoundationNetworking on Linux. One code path
/// on every platform and no package dependency (docs/decisions/0022-courier-sdk-urlsession.md).
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let timeout: TimeInterval

    /// `timeout` bounds each attempt (connect, send, answer), not the retries around it.
    public init(session: URLSession = URLSessionTransport.defaultSession, timeout: TimeInterval = 30) {
        self.session = session
        self.timeout = timeout
    }

    /// An ephemeral session: no cookies or cache, since every request carries its bearer key and
    /// no answer of the API is meant to be reused.
    public static var defaultSession: URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration)
    }

    public func send(_ request: HTTPRequestData) async throws(CountersignClientError) -> HTTPResponseData {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            throw .transport(String(describing: error))
        }
        guard let http = response as? HTTPURLResponse else {
            throw .transport("not an HTTP response from \(request.url.absoluteString)")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return HTTPResponseData(status: http.statusCode, headers: headers, body: Array(data))
    }
}
