import Foundation

/// An RFC 9457 problem the server answered with (`application/problem+json`).
///
/// `code` is the stable, machine-readable part (`validation_failed`, `blank_signature`,
/// `proof_already_recorded`, …, docs/api.md); `errors` names each field at fault by JSON pointer.
public struct Problem: Sendable, Equatable, Decodable, Error {
    /// One field at fault.
    public struct FieldError: Sendable, Equatable, Decodable {
        /// A JSON pointer into the request body (`/ink/strokes/2/17`), or a parameter/header name.
        public var field: String
        public var message: String
        public var code: String?

        public init(field: String, message: String, code: String? = nil) {
            self.field = field
            self.message = message
            self.code = code
        }
    }

    /// The HTTP status.
    public var status: Int
    public var code: String
    public var title: String?
    public var detail: String?
    public var type: String?
    public var instance: String?
    public var requestID: String?
    public var errors: [FieldError]

    public init(status: Int, code: String, title: String? = nil, detail: String? = nil, type: String? = nil,
                instance: String? = nil, requestID: String? = nil, errors: [FieldError] = []) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.type = type
        self.instance = instance
        self.requestID = requestID
        self.errors = errors
    }

    enum CodingKeys: String, CodingKey {
        case status, code, title, detail, type, instance, errors
        case requestID = "request_id"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = try c.decode(Int.self, forKey: .status)
        code = try c.decode(String.self, forKey: .code)
        title = try c.decodeIfPresent(String.self, forKey: .title)
        detail = try c.decodeIfPresent(String.self, forKey: .detail)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        instance = try c.decodeIfPresent(String.self, forKey: .instance)
        requestID = try c.decodeIfPresent(String.self, forKey: .requestID)
        errors = try c.decodeIfPresent([FieldError].self, forKey: .errors) ?? []
    }
}

extension Problem {
    /// The problem in a response, or a stand-in naming the status when the body is not a problem
    /// document (a proxy's HTML page, an empty 502): every failure still has a code to act on.
    static func decode(status: Int, body: [UInt8]) -> Problem {
        if let problem = try? ResponseDecoding.decoder.decode(Problem.self, from: Data(body)) { return problem }
        let excerpt = String(decoding: body.prefix(200), as: UTF8.self)
        return Problem(status: status, code: "http_\(status)", title: "Unexpected response",
                       detail: excerpt.isEmpty ? nil : excerpt)
    }
}
