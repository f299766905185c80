import Foundation

/// A webhook URL as the audit trail keeps it: scheme, host, port and path, without the query, the
/// fragment or any userinfo. Receivers often authenticate with a token in the query
/// (`?token=…`); an audit event is kept for years and read by every auditor, so it must not hold
/// one (security issue 41, item 7). What was left out is named, not shown.
public enum WebhookAuditURL {
    /// The details `webhook_created` and `webhook_updated` record for `url`: `url` without its
    /// query, fragment and userinfo, and `url_omitted` (`query`, `fragment`, `userinfo`,
    /// comma-separated) when any was there. A text that is not a URL at all (the guard refuses
    /// those before they are stored) is recorded as `url_omitted: unparsable` alone.
    public static func details(_ url: String) -> [String: String] {
        guard var components = URLComponents(string: url), components.scheme != nil else {
            return ["url_omitted": "unparsable"]
        }
        var omitted: [String] = []
        if components.user != nil || components.password != nil { omitted.append("userinfo") }
        if components.percentEncodedQuery != nil { omitted.append("query") }
        if components.percentEncodedFragment != nil { omitted.append("fragment") }
        components.user = nil
        components.password = nil
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        guard let kept = components.string else { return ["url_omitted": "unparsable"] }
        var details = ["url": kept]
        if !omitted.isEmpty { details["url_omitted"] = omitted.joined(separator: ",") }
        return details
    }
}
