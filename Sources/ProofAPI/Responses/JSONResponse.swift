import Foundation
import HTTPTypes
import Hummingbird

/// Builds `application/json` responses with sorted keys (stable bytes for identical values).
public enum JSONResponse {
    /// Encodes `value`; the caller adds status-specific headers.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// A response carrying `bytes` as JSON.
    public static func make(_ status: HTTPResponse.Status, bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A response carrying `value` as JSON.
    public static func make<T: Encodable>(_ status: HTTPResponse.Status, _ value: T, headers: HTTPFields = [:]) throws -> Response {
        make(status, bytes: try encode(value), headers: headers)
    }
}
