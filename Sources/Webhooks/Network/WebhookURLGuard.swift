import Foundation
import Logging

/// Decides whether a webhook URL may be used: `http` or `https`, a host, no credentials, and —
/// unless private networks are allowed — every address the host resolves to is public (see
/// ``IPAddress/restriction``). Checked when an endpoint is registered or changed, and again before
/// every send, because a name can be re-pointed at an internal address after registration.
///
/// A refusal of a host *name* says what kind of address it resolves to (`private`, `loopback`…),
/// never the address: the admin who registers a URL must not learn from us where an internal name
/// points. The address is logged at debug level only.
public struct WebhookURLGuard: Sendable {
    /// Why a URL was refused.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    let resolver: any HostResolver
    /// `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`: tests and local development.
    public let allowsPrivateNetworks: Bool
    let logger: Logger

    public init(resolver: any HostResolver = SystemHostResolver(), allowsPrivateNetworks: Bool,
                logger: Logger = Logger(label: "countersign.webhooks")) {
        self.resolver = resolver
        self.allowsPrivateNetworks = allowsPrivateNetworks
        self.logger = logger
    }

    /// The URL's parts once checked for shape (no resolution).
    public static func parse(_ text: String) throws(Refusal) -> URLComponents {
        guard text.utf8.count <= 2048, !text.contains(where: { $0.isWhitespace }),
              let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw Refusal(reason: "not an absolute URL")
        }
        guard scheme == "http" || scheme == "https" else { throw Refusal(reason: "the scheme must be http or https") }
        guard let host = components.host, !host.isEmpty else { throw Refusal(reason: "the URL has no host") }
        guard components.user == nil, components.password == nil else { throw Refusal(reason: "credentials in the URL are not allowed") }
        return components
    }

    /// Refuses `text` unless it may receive webhooks now.
    public func check(_ text: String) async throws(Refusal) {
        let components = try Self.parse(text)
        guard !allowsPrivateNetworks else { return }
        let host = components.host!.lowercased()
        if let literal = IPAddress(host) {
            // The URL names the address itself: saying which range it is in tells the admin nothing new.
            if let restriction = literal.restriction { throw Refusal(reason: "\(host) is not a public address: \(restriction)") }
            return
        }
        if host == "localhost" || host.hasSuffix(".localhost") { throw Refusal(reason: "\(host) is loopback") }
        let addresses: [IPAddress]
        do {
            addresses = try await resolver.addresses(of: host)
        } catch {
            throw Refusal(reason: "\(host) does not resolve: \(error)")
        }
        guard !addresses.isEmpty else { throw Refusal(reason: "\(host) resolves to no address") }
        for address in addresses {
            if let restriction = address.restriction {
                logger.debug("webhook host refused", metadata: ["host": "\(host)", "address": "\(address)", "restriction": "\(restriction)"])
                throw Refusal(reason: "\(host) resolves to a non-public address (\(restriction.kind))")
            }
        }
    }
}
