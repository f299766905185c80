import Foundation
import Hummingbird
import ProofService

/// The query parameters every keyset-paged list shares — `since`, `until`, `limit`, `cursor` —
/// with the field errors found so far and the `next` link of a page.
///
/// Routes read their own filters through `value(_:)`, call `readPeriod()` and `readPage()` where
/// those parameters belong in their error order, and answer 422 when `errors` is not empty.
struct PagedListQuery {
    let parameters: Parameters
    let maxLimit: Int
    var since: Date?
    var until: Date?
    var limit: Int
    var afterSeq: Int64?
    var errors: [Problem.FieldError] = []

    init(_ parameters: Parameters, defaultLimit: Int, maxLimit: Int) {
        self.parameters = parameters
        self.limit = defaultLimit
        self.maxLimit = maxLimit
    }

    /// The raw value of query parameter `name`.
    func value(_ name: String) -> String? {
        parameters[Substring(name)].map(String.init)
    }

    /// Reads `since` and `until` (RFC 3339 with offset).
    mutating func readPeriod() {
        for name in ["since", "until"] {
            guard let raw = value(name) else { continue }
            do {
                let time = try RFC3339Timestamp(parsing: raw).date
                if name == "since" { since = time } else { until = time }
            } catch {
                errors.append(.init(field: name, message: "an RFC 3339 timestamp with offset", code: "invalid_timestamp"))
            }
        }
    }

    /// Reads `limit` (1...maxLimit) and `cursor` (a `next_cursor` from an earlier page).
    mutating func readPage() {
        if let raw = value("limit") {
            if let parsed = Int(raw), (1...maxLimit).contains(parsed) { limit = parsed } else {
                errors.append(.init(field: "limit", message: "an integer in 1...\(maxLimit)", code: "invalid_limit"))
            }
        }
        if let raw = value("cursor") {
            if let seq = Self.decodeCursor(raw) { afterSeq = seq } else {
                errors.append(.init(field: "cursor", message: "a next_cursor value from a previous page", code: "invalid_cursor"))
            }
        }
    }

    /// The opaque cursor after `nextSeq` and the link to the next page of `path` with the same filters.
    func nextPage(path: String, after nextSeq: Int64?) -> (cursor: String?, link: String?) {
        guard let nextSeq else { return (nil, nil) }
        let cursor = Self.encodeCursor(nextSeq)
        var items = parameters.filter { $0.key != "cursor" }.map { "\($0.key)=\(Self.percentEncode(String($0.value)))" }
        items.append("cursor=\(cursor)")
        return (cursor, path + "?" + items.joined(separator: "&"))
    }

    static func percentEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,:")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// Cursors are opaque to clients: `c1.<seq>` in base64url.
    static func encodeCursor(_ seq: Int64) -> String {
        Data("c1.\(seq)".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    static func decodeCursor(_ cursor: String) -> Int64? {
        var text = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard cursor.count <= 64, let data = Data(base64Encoded: text), let plain = String(data: data, encoding: .utf8),
              plain.hasPrefix("c1."), let seq = Int64(plain.dropFirst(3)), seq > 0 else { return nil }
        return seq
    }
}

/// One page of a list: `{"items": [...], "next_cursor": ..., "next": ...}`, with explicit nulls on the last page.
struct ListPage<Item: Encodable>: Encodable {
    var items: [Item]
    var nextCursor: String?
    var next: String?

    enum CodingKeys: String, CodingKey {
        case items, next
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
        try container.encode(next, forKey: .next)
    }
}
