import Archive
import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import ProofService

extension RequestBodyReader {
    /// A proof upload's body: JSON (415 otherwise), at most `limit` bytes before and after gzip
    /// (413), inflated when sent as gzip (400 when that fails), with its digest.
    ///
    /// `refuseBeforeReading` is asked once the head has passed those checks, with the declared
    /// `Content-Length`: an error it returns is thrown before a byte of the body is read.
    static func upload(_ request: Request, limit: Int,
                       refuseBeforeReading: (_ declaredLength: Int?) -> (any Error)? = { _ in nil }) async throws -> ReceivedUpload {
        let contentType = try requireJSON(request)
        let encoding = try contentEncoding(request)
        let declared = request.headers[.contentLength].flatMap(Int.init)
        if let declared, declared > limit { throw tooLarge(limit: limit) }
        if let refusal = refuseBeforeReading(declared) { throw refusal }
        let received = try await collect(request, limit: limit)
        var json = received
        if encoding == "gzip" {
            do {
                json = try GzipInflater.inflate(received, limit: limit)
            } catch .tooLarge(let limit) {
                throw tooLarge(limit: limit, what: "The inflated request body")
            } catch .invalid(let message) {
                throw Problem.badRequest("The body is not valid gzip: \(message).", code: "invalid_gzip")
            }
        }
        return ReceivedUpload(bytes: received, json: json, contentType: contentType, contentEncoding: encoding,
                              sha256: SHA256.hash(received))
    }

    /// `gzip` for a gzip body, nil for none; 415 for any other coding.
    static func contentEncoding(_ request: Request) throws -> String? {
        guard let raw = request.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased(), !raw.isEmpty,
              raw != "identity" else { return nil }
        guard raw == "gzip" || raw == "x-gzip" else {
            throw Problem(.unsupportedMediaType, code: "unsupported_content_encoding",
                          detail: "Content-Encoding \(raw.prefix(40)) is not supported; send gzip or nothing.")
        }
        return "gzip"
    }
}
