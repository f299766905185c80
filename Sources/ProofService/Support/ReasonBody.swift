import Foundation

/// A request body of the form `{"reason": "…"}` (cancelling, giving up, erasing, holding): the
/// reason is required, trimmed, of `lengths` code points, without control or bidi characters.
struct ReasonBody: Decodable {
    var reason: String?

    /// The trimmed reason of `body`, or a 422 naming `/reason`.
    static func reason(of body: [UInt8], lengths: ClosedRange<Int>) throws -> String {
        let input = try JSONEnvelopeDecoder.decode(ReasonBody.self, from: body)
        guard let sent = input.reason else {
            throw ServiceError.validation("A reason is required.", errors: [.init(field: "/reason", message: "required", code: "missing_field")])
        }
        let reason = sent.trimmingCharacters(in: .whitespacesAndNewlines)
        let errors = TextRules.check(reason, sent: sent, at: "/reason", lengths: lengths)
        guard errors.isEmpty else { throw ServiceError.validation("The reason is not valid.", errors: errors) }
        return reason
    }
}
