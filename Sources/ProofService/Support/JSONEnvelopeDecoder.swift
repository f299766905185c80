import Foundation
import SignatureKit

/// Decodes a small JSON document (a delivery, an upload's envelope without its points), turning
/// decoding failures into 400/422 refusals that name the field.
///
/// A member name twice in one object is refused (422 `duplicate_member`) before decoding: JSON
/// parsers disagree on which of the two wins, and the stored original must mean to every reader
/// what it meant to us.
public enum JSONEnvelopeDecoder {
    /// `bytes` as `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(ServiceError) -> T {
        do {
            try JSONMemberLocator.requireUniqueMembers(in: bytes)
        } catch where error.code == .duplicateField {
            throw duplicateMember(error)
        } catch {
            // Not a JSON object: the decoder below says what is wrong, as it always has.
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(expected, context) {
            throw .validation("A field has the wrong type.", errors: [
                .init(field: pointer(context.codingPath), message: "expected \(describe(expected))", code: "wrong_type"),
            ])
        } catch let DecodingError.valueNotFound(expected, context) {
            throw .validation("A field is null.", errors: [
                .init(field: pointer(context.codingPath), message: "expected \(describe(expected)), found null", code: "wrong_type"),
            ])
        } catch let DecodingError.keyNotFound(key, context) {
            throw .validation("A field is missing.", errors: [
                .init(field: pointer(context.codingPath + [key]), message: "required", code: "missing_field"),
            ])
        } catch {
            throw ServiceError(.badRequest, code: "invalid_json", detail: "The body is not valid JSON.")
        }
    }

    /// The refusal of a body with a member name twice.
    public static func duplicateMember(_ error: InkError) -> ServiceError {
        ServiceError(.unprocessable, code: "duplicate_member",
                     detail: "A member name appears twice in one object: \(error.message). Every member name must be unique.",
                     errors: [.init(field: error.pointer ?? "/", message: "appears more than once", code: "duplicate_member")])
    }

    /// A JSON pointer (`/location/lat`) for a coding path.
    static func pointer(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "/" : path.map { "/" + ($0.intValue.map(String.init) ?? $0.stringValue) }.joined()
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Double.Type, is Int.Type: return "a number"
        case is Bool.Type: return "a boolean"
        default: return "an object"
        }
    }
}
