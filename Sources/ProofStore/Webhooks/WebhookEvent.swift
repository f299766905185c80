import Foundation

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

    /// `delivery.delivered`: the proof's id, digests and links.
    public static func deliveryDelivered(reference: String, proofID: UUID, receivedAt: Date,
                                         digests: [String: String]) -> WebhookEvent {
        let base = deliveryPath(reference) + "/proof"
        return encode(.deliveryDelivered, reference: reference, DeliveryDeliveredData(
            reference: reference, proofID: proofID.uuidString.lowercased(), receivedAt: WebhookTimestamp.format(receivedAt),
            digests: digests,
            links: .init(delivery: deliveryPath(reference), metadata: base, png: base + "/signature.png",
                         svg: base + "/signature.svg", points: base + "/points")))
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

struct DeliveryDeliveredData: Encodable {
    struct Links: Encodable {
        var delivery, metadata, png, svg, points: String
    }
    var reference: String
    var proofID: String
    var receivedAt: String
    var digests: [String: String]
    var links: Links

    enum CodingKeys: String, CodingKey {
        case reference, proofID = "proof_id", receivedAt, digests, links
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

/// RFC 3339 UTC timestamps with microseconds, as the payloads carry them.
enum WebhookTimestamp {
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = Date(timeIntervalSince1970: TimeInterval(micros / 1_000_000))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: seconds)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2))."
            + "\(pad(Int(micros % 1_000_000), 6))Z"
    }
}
