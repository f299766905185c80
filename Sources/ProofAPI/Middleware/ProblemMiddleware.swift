import HTTPTypes
import Hummingbird
import Logging
import Postgres
import ProofService

/// Turns every error escaping a route into an `application/problem+json` response.
///
/// Database outages become 503 with `Retry-After`; unexpected errors become a 500 whose body says
/// nothing of the internals (the details go to the log with the request id).
public struct ProblemMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    /// Creates the middleware.
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try Self.problem(for: error, logger: context.logger).response(from: request, context: context)
        }
    }

    /// The problem that represents `error`.
    public static func problem(for error: any Error, logger: Logger) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let refusal as ServiceError:
            return Problem(refusal)
        case let httpError as HTTPError:
            let code: String
            switch httpError.status {
            case .notFound: code = "not_found"
            case .methodNotAllowed: code = "method_not_allowed"
            case .contentTooLarge: code = "body_too_large"
            case .unauthorized: code = "unauthorized"
            case .forbidden: code = "forbidden"
            case .badRequest: code = "bad_request"
            default: code = "http_\(httpError.status.code)"
            }
            return Problem(httpError.status, code: code, detail: httpError.body, headers: httpError.headers)
        case let database as PostgresError where database.kind == .invalidParameter:
            // Validation should have refused the value first; this is the net under every field.
            logger.notice("refused a value at binding", metadata: ["error": "\(database)"])
            return Problem.badRequest("A text value contains a NUL byte.", code: "invalid_text")
        case let database as PostgresError where database.isTransient:
            logger.warning("database unavailable", metadata: ["error": "\(database)"])
            return .databaseUnavailable()
        case is CancellationError:
            return Problem(.serviceUnavailable, code: "cancelled", detail: "The request was cancelled.")
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return Problem(.internalServerError, code: "internal_error",
                           detail: "An unexpected error occurred; quote the request id when reporting it.")
        }
    }
}
