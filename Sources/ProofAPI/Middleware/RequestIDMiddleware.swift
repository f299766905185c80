import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id: the caller's `X-Request-Id` when it is short and plain, else a new
/// one (Hummingbird's). The id goes into every log line of the request (`request_id`) and back in the response.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext

    /// Creates the middleware.
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let offered = request.headers[.requestID]
        let id = offered.flatMap(Self.isAcceptable) == true ? offered! : context.id
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        do {
            var response = try await next(request, context)
            response.headers[.requestID] = id
            return response
        } catch let error as any HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[.requestID] = id
            return response
        }
    }

    static func isAcceptable(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count) && value.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }
}

extension HTTPField.Name {
    /// `X-Request-Id`.
    public static let requestID = HTTPField.Name("X-Request-Id")!
    /// `Retry-After`.
    public static let retryAfterHeader = HTTPField.Name("Retry-After")!
}
