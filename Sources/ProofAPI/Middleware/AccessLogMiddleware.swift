import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// One structured log line per request: method, path, status, duration, request id (from metadata).
public struct AccessLogMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    /// Creates the middleware.
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: Int(response.status.code), since: start, context: context)
            return response
        } catch let error as any HTTPResponseError {
            log(request, status: Int(error.status.code), since: start, context: context)
            throw error
        } catch {
            log(request, status: 500, since: start, context: context)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant, context: Context) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.2f", milliseconds)),
        ])
    }
}
