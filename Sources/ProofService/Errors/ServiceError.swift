/// A use case's refusal, in terms a caller can act on: what kind of failure, a stable machine
/// `code`, a human `detail` and, for invalid input, the fields at fault.
///
/// The HTTP layer maps ``Kind`` to a status and the rest to an RFC 9457 problem, so use cases
/// never name an HTTP type and the same codes reach every caller.
public struct ServiceError: Error, Sendable, Equatable {
    /// The class of failure (the HTTP layer's status).
    public enum Kind: Sendable, Equatable {
        /// The input cannot be read at all (400).
        case badRequest
        /// The caller is known but may not do this with what it presented (403), e.g. an upload
        /// signed with a device key that is not its own approved key.
        case forbidden
        /// The thing named does not exist (404).
        case notFound
        /// The request conflicts with what is stored (409).
        case conflict
        /// The thing existed and was removed for good (410).
        case gone
        /// Readable input that breaks a rule (422).
        case unprocessable
        /// A dependency is unavailable; retry later (503).
        case unavailable
        /// Stored data could not be used (500).
        case internalError
    }

    public var kind: Kind
    /// Stable machine code, e.g. `delivery_not_found`, `blank_signature`.
    public var code: String
    /// A short summary when the kind's default does not fit (e.g. "Invalid signature").
    public var title: String?
    /// What went wrong in this occurrence.
    public var detail: String
    /// Field-level errors.
    public var errors: [FieldError]
    /// Seconds after which a retry may succeed (`unavailable` and some conflicts).
    public var retryAfterSeconds: Int?

    /// Creates an error.
    public init(_ kind: Kind, code: String, title: String? = nil, detail: String, errors: [FieldError] = [],
                retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// 422 `validation_failed` with the fields at fault.
    public static func validation(_ detail: String, errors: [FieldError]) -> ServiceError {
        ServiceError(.unprocessable, code: "validation_failed", detail: detail, errors: errors)
    }

    /// No delivery has `reference`.
    public static func deliveryNotFound(_ reference: String) -> ServiceError {
        ServiceError(.notFound, code: "delivery_not_found", detail: "No delivery has the reference \(reference).")
    }
}
