import Foundation
import HTTPTypes
import Hummingbird
import ProofService

/// An RFC 9457 problem detail, sent as `application/problem+json`.
///
/// Every error the API returns is one of these, with a stable machine `code`, a human `detail`,
/// and for validation failures the list of fields at fault.
public struct Problem: Error, HTTPResponseError, Sendable, Equatable {
    /// One field-level error (a JSON pointer or dotted path, and what is wrong with it).
    public typealias FieldError = ProofService.FieldError

    /// HTTP status.
    public var status: HTTPResponse.Status
    /// Stable machine code, e.g. `validation_failed`, `blank_signature`, `not_found`.
    public var code: String
    /// Short summary of the problem type.
    public var title: String
    /// What went wrong in this occurrence.
    public var detail: String?
    /// Field-level errors.
    public var errors: [FieldError]
    /// Extra response headers (e.g. `Retry-After`).
    public var headers: HTTPFields

    /// Creates a problem.
    public init(_ status: HTTPResponse.Status, code: String, title: String? = nil, detail: String? = nil,
                errors: [FieldError] = [], headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.title = title ?? status.reasonPhrase
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    /// The media type of problem responses.
    public static let contentType = "application/problem+json"

    private struct Body: Encodable {
        var type: String
        var title: String
        var status: Int
        var detail: String?
        var code: String
        var instance: String?
        var requestId: String?
        var errors: [FieldError]?
        enum CodingKeys: String, CodingKey {
            case type, title, status, detail, code, instance, errors
            case requestId = "request_id"
        }
    }

    /// The JSON body for a request with id `requestID` at `path`.
    public func body(requestID: String?, path: String?) -> Data {
        let body = Body(type: "urn:countersign:problem:\(code)", title: title, status: Int(status.code), detail: detail,
                        code: code, instance: path, requestId: requestID, errors: errors.isEmpty ? nil : errors)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(body)) ?? Data(#"{"status":500,"code":"internal_error"}"#.utf8)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let requestID = (context as? AppRequestContext)?.requestID
        let data = body(requestID: requestID, path: request.uri.path)
        var fields = headers
        fields[.contentType] = Self.contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension Problem {
    /// The problem for a use case's refusal: its kind becomes the status, the rest is kept.
    public init(_ error: ServiceError) {
        let status: HTTPResponse.Status
        switch error.kind {
        case .badRequest: status = .badRequest
        case .forbidden: status = .forbidden
        case .notFound: status = .notFound
        case .conflict: status = .conflict
        case .gone: status = .gone
        case .unprocessable: status = .unprocessableContent
        case .unavailable: status = .serviceUnavailable
        case .internalError: status = .internalServerError
        }
        var headers: HTTPFields = [:]
        if let seconds = error.retryAfterSeconds { headers[.retryAfterHeader] = String(seconds) }
        self.init(status, code: error.code, title: error.title, detail: error.detail, errors: error.errors, headers: headers)
    }

    /// 404 for a missing resource.
    public static func notFound(_ detail: String) -> Problem { Problem(.notFound, code: "not_found", detail: detail) }
    /// 422 with field errors.
    public static func validation(_ detail: String, errors: [FieldError] = []) -> Problem {
        Problem(.unprocessableContent, code: "validation_failed", detail: detail, errors: errors)
    }
    /// 400 for a body that is not what the endpoint reads.
    public static func badRequest(_ detail: String, code: String = "bad_request", errors: [FieldError] = []) -> Problem {
        Problem(.badRequest, code: code, detail: detail, errors: errors)
    }
    /// 503 while the database cannot be reached; clients should retry after a pause.
    public static func databaseUnavailable(retryAfterSeconds: Int = 2) -> Problem {
        Problem(.serviceUnavailable, code: "database_unavailable",
                detail: "The database is unavailable; retry shortly.",
                headers: [.retryAfterHeader: String(retryAfterSeconds)])
    }
}
