import Cryptography
import Foundation
import HTTPTypes
import Hummingbird
import ProofStore

/// Responses for content that never changes once stored (a proof's images and original body):
/// the SHA-256 is the ETag, and `If-None-Match` with it is answered 304.
enum ImageResponse {
    /// Cache-Control of immutable proof content: private (it is behind a key), kept for a year.
    static let immutable = "private, max-age=31536000, immutable"

    /// 200 with `body`, or 304 when the request already has `sha256` (or `body` is nil because the
    /// store left it out for a matching ETag).
    static func make(_ request: Request, type: String, sha256: [UInt8], body: [UInt8]?) -> Response {
        let headers: HTTPFields = [.contentType: type, .eTag: "\"\(sha256.hexString)\"", .cacheControl: immutable]
        guard let body, !etagMatches(request, sha256: sha256) else { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The SHA-256 named by `If-None-Match` when it matches `sha256` (list, weak and `*` forms accepted).
    static func etagMatches(_ request: Request, sha256: [UInt8]) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        let hex = sha256.hexString
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == hex { return true }
        }
        return false
    }

    /// The first entity tag of `If-None-Match` as SHA-256 bytes, when it is one.
    static func firstETag(_ request: Request) -> [UInt8]? {
        guard let header = request.headers[.ifNoneMatch] else { return nil }
        let tag = header.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let hex = tag.trimmingCharacters(in: CharacterSet(charactersIn: "W/\""))
        guard hex.utf8.count == 64 else { return nil }
        return Hex.decode(hex)
    }
}
