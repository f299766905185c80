import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Reads request bodies with a byte limit (413 beyond it) and decodes small JSON envelopes.
enum RequestBodyReader {
    /// The whole body, refusing more than `limit` bytes (checked against `Content-Length` first).
    static func collect(_ request: Request, limit: Int) async throws -> [UInt8] {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge(limit: limit)
        }
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch is NIOTooManyBytesError {
            throw tooLarge(limit: limit)
        }
    }

    static func tooLarge(limit: Int, what: String = "The request body") -> Problem {
        Problem(.contentTooLarge, code: "body_too_large", detail: "\(what) exceeds the limit of \(limit) bytes.")
    }

    /// Refuses bodies that are not JSON (415); a missing `Content-Type` is taken as JSON.
    static func requireJSON(_ request: Request) throws -> String {
        guard let type = request.headers[.contentType] else { return "application/json" }
        let media = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json")) else {
            throw Problem(.unsupportedMediaType, code: "unsupported_media_type",
                          detail: "The body must be application/json, not \(type.prefix(100)).")
        }
        return type
    }
}
