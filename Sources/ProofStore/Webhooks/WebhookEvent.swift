import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An event to put in the outbox: its type, what it is about, and its `data` object (JSON).
///
/// The outbox adds `sequence` to `data` and wraps it as `{"type", "timestamp", "data"}`, the
/// Standard Webhooks payload shape. Build events with the static constructors, which fix each
/// type's schema (public/openapi.yaml `webhooks:` documents them).
public struct WebhookEvent: Sendable, Equatable {
    public var type: WebhookEventType
    /// The delivery the event is about: the outbox resolves its id, and the payload's `sequence`
    /// orders the events of one delivery.
    public var deliveryReference: String?
    /// Only this endpoint receives the event (tests); otherwise every endpoint subscribed to `type`.
    public var endpointID: UUID?
    /// The `data` object, as JSON text.
    public var dataJSON: String

    /// Creates an event; prefer the typed constructors.
    public init(type: WebhookEventType, deliveryReference: String?, endpointID: UUID? = nil, dataJSON: String) {
        self.type = type
        self.deliveryReference = deliveryReference
        self.endpointID = endpointID
        self.dataJSON = dataJSON
    }

    /// The path of a delivery in the API (the same as ProofService's `ProofLinks`).
    static func deliveryPath(_ reference: String) -> String { "/v1/deliveries/\(reference)" }

    /// `delivery.created`.
    public static func deliveryCreated(reference: String, deliveryID: UUID, recipientName: String, address: String,
                                       createdAt: Date) -> WebhookEvent {
        encode(.deliveryCreated, reference: reference, DeliveryCreatedData(
            reference: reference, deliveryID: deliveryID.uuidString.lowercased(), recipientName: recipientName, address: address,
            createdAt: WebhookTimestamp.format(createdAt), links: .init(delivery: deliveryPath(reference))))
    }

    /// `delivery.delivered`: the proof's id, digests and links. Written directly (``JSONText``),
    /// not by `JSONEncoder`: every upload makes one, and the encoder was 3 % of an upload's
    /// server CPU (docs/decisions/0027-upload-cost.md). The members are those the other events'
    /// encoder would give, in its sorted order (WebhookEventTests compares the two).
    public static func deliveryDelivered(reference: String, proofID: UUID, receivedAt: Date,
                                         digests: [String: String]) -> WebhookEvent {
        let base = deliveryPath(reference) + "/proof"
        let json = JSONText.object { data in
            data.strings("digests", digests)
            data.object("links") { links in
                links.string("delivery", deliveryPath(reference))
                links.string("metadata", base)
                links.string("png", base + "/signature.png")
                links.string("points", base + "/points")
                links.string("svg", base + "/signature.svg")
            }
            data.string("proof_id", proofID.uuidString.lowercased())
            data.string("received_at", WebhookTimestamp.format(receivedAt))
            data.string("reference", reference)
        }
        return WebhookEvent(type: .deliveryDelivered, deliveryReference: reference, dataJSON: json)
    }

    /// `delivery.attempt_failed`: for the attempts use case to enqueue in its transaction.
    public static func deliveryAttemptFailed(reference: String, attemptID: UUID, reason: String, note: String?,
                                             attemptedAt: Date) -> WebhookEvent {
        encode(.deliveryAttemptFailed, reference: reference, DeliveryAttemptFailedData(
            reference: reference, attemptID: attemptID.uuidString.lowercased(), reason: reason, note: note,
            attemptedAt: WebhookTimestamp.format(attemptedAt), links: .init(delivery: deliveryPath(reference))))
    }

    /// `delivery.cancelled`: for the cancel use case to enqueue in its transaction.
    public static func deliveryCancelled(reference: String, reason: String?, cancelledAt: Date) -> WebhookEvent {
        encode(.deliveryCancelled, reference: reference, DeliveryCancelledData(
            reference: reference, reason: reason, cancelledAt: WebhookTimestamp.format(cancelledAt),
            links: .init(delivery: deliveryPath(reference))))
    }

    /// `webhook.test`, to `endpointID` only.
    public static func test(endpointID: UUID, requestedBy: String?) -> WebhookEvent {
        var event = encode(.webhookTest, reference: nil, TestData(endpointID: endpointID.uuidString.lowercased(),
                                                                    requestedBy: requestedBy))
        event.endpointID = endpointID
        return event
    }

    private static func encode(_ type: WebhookEventType, reference: String?, _ data: some Encodable) -> WebhookEvent {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our own plain structs of strings always encode.
        let json = (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return WebhookEvent(type: type, deliveryReference: reference, dataJSON: json)
    }
}

/// The `data` of each event type (snake_case on the wire).
struct DeliveryLinks: Encodable {
    var delivery: String
}

struct DeliveryCreatedData: Encodable {
    var reference: String
    var deliveryID: String
    var recipientName: String
    var address: String
    var createdAt: String
    var links: DeliveryLinks

    enum CodingKeys: String, CodingKey {
        case reference, deliveryID = "delivery_id", recipientName, address, createdAt, links
    }
}

struct DeliveryAttemptFailedData: Encodable {
    var reference: String
    var attemptID: String
    var reason: String
    var note: String?
    var attemptedAt: String
    var links: DeliveryLinks

    enum CodingKeys: String, CodingKey {
        case reference, attemptID = "attempt_id", reason, note, attemptedAt, links
    }
}

struct DeliveryCancelledData: Encodable {
    var reference: String
    var reason: String?
    var cancelledAt: String
    var links: DeliveryLinks
}

struct TestData: Encodable {
    var endpointID: String
    var requestedBy: String?

    enum CodingKeys: String, CodingKey {
        case endpointID = "endpoint_id", requestedBy
    }
}

/// RFC 3339 UTC timestamps with microseconds, as the payloads carry them. The calendar fields
/// come from the C library's `gmtime_r`: a Foundation `Calendar` per call cost more than the
/// rest of the `delivery.delivered` event.
enum WebhookTimestamp {
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        // Whole seconds rounded down, so the microseconds are never negative.
        let seconds = micros >= 0 ? micros / 1_000_000 : -((-micros + 999_999) / 1_000_000)
        var time = time_t(seconds)
        var fields = tm()
        gmtime_r(&time, &fields)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(Int(fields.tm_year) + 1900, 4))-\(pad(Int(fields.tm_mon) + 1, 2))-\(pad(Int(fields.tm_mday), 2))T"
            + "\(pad(Int(fields.tm_hour), 2)):\(pad(Int(fields.tm_min), 2)):\(pad(Int(fields.tm_sec), 2))."
            + "\(pad(Int(micros - seconds * 1_000_000), 6))Z"
    }
}
