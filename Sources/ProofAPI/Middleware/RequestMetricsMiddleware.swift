import HTTPTypes
import Hummingbird

/// Counts every request and records its latency by method, route template and status, and makes
/// the application's ``CountersignMetrics`` the task-local ``CountersignMetrics/current`` for the
/// handlers below it. Add it first, so it also sees requests that other middleware answer.
///
/// Latency runs from the router handing over the request to the response being ready (body bytes
/// already in memory); writing to the socket is not included.
public struct RequestMetricsMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    let metrics: CountersignMetrics

    /// Creates the middleware recording into `metrics`.
    public init(metrics: CountersignMetrics) {
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        return try await CountersignMetrics.$current.withValue(metrics) {
            do {
                let response = try await next(request, context)
                record(request, context, status: Int(response.status.code), since: start)
                return response
            } catch let error as any HTTPResponseError {
                record(request, context, status: Int(error.status.code), since: start)
                throw error
            } catch {
                record(request, context, status: 500, since: start)
                throw error
            }
        }
    }

    private func record(_ request: Request, _ context: Context, status: Int, since start: ContinuousClock.Instant) {
        metrics.recordRequest(method: request.method, endpoint: context.endpointPath, status: status,
                              duration: ContinuousClock.now - start)
    }
}
