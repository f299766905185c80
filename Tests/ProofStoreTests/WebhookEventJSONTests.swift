import Foundation
import Testing
@testable import ProofStore

/// `delivery.delivered` is written without `JSONEncoder` (one per upload); its data must be the
/// object the encoder gave, and its timestamps the text the calendar gave.
@Suite("Webhook event JSON")
struct WebhookEventJSONTests {
    /// What the `JSONEncoder` path (snake_case, sorted keys, slashes as they are) wrote.
    struct EncodedDelivered: Encodable {
        struct Links: Encodable { var delivery, metadata, png, svg, points: String }
        var reference: String, proofID: String, receivedAt: String
        var digests: [String: String]
        var links: Links
        enum CodingKeys: String, CodingKey { case reference, proofID = "proof_id", receivedAt, digests, links }
    }

    /// The calendar's fields, as the timestamps were made before `gmtime_r`.
    static func calendarText(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: TimeInterval(micros / 1_000_000)))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
                      Int(micros % 1_000_000))
    }

    @Test("delivery.delivered has the encoder's text, byte for byte")
    func deliveredAsTheEncoderWroteIt() throws {
        let id = UUID(), received = Date(timeIntervalSince1970: 1_767_225_599.123_456)
        let digests = ["png_sha256": "ab", "points_sha256": "cd", "ink_sha256": "ef", "metadata_sha256": "0\"1\\/\u{1}"]
        for reference in ["REF-1", "a.b_c:d-9"] {
            let event = WebhookEvent.deliveryDelivered(reference: reference, proofID: id, receivedAt: received, digests: digests)
            let base = "/v1/deliveries/\(reference)/proof"
            let expected = EncodedDelivered(
                reference: reference, proofID: id.uuidString.lowercased(), receivedAt: Self.calendarText(received), digests: digests,
                links: .init(delivery: "/v1/deliveries/\(reference)", metadata: base, png: base + "/signature.png",
                             svg: base + "/signature.svg", points: base + "/points"))
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            #expect(event.dataJSON == String(decoding: try encoder.encode(expected), as: UTF8.self))
            #expect(event.type == .deliveryDelivered && event.deliveryReference == reference)
        }
    }

    @Test("timestamps: the calendar's text across days, leap years and the rounding of microseconds")
    func timestampsAsTheCalendarGaveThem() {
        var generator = SystemRandomNumberGenerator()
        var dates = [0, 951_782_400, 1_709_164_800.999_999_6, 4_102_444_799.5, 253_402_300_799].map { Date(timeIntervalSince1970: $0) }
        for _ in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<4_102_444_800, using: &generator))) }
        for date in dates { #expect(WebhookTimestamp.format(date) == Self.calendarText(date), "\(date.timeIntervalSince1970)") }
    }
}
