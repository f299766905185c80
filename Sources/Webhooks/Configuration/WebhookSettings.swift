import Foundation

/// The webhook settings, read from the environment (README.md names them).
public struct WebhookSettings: Sendable, Equatable {
    /// `WEBHOOK_SECRETS_KEY`: 32 bytes, base64 or hex, sealing the signing secrets at rest. Without
    /// it endpoints cannot be created and nothing is sent (the API answers 503).
    public var secretsKey: String?
    /// `WEBHOOK_ALLOW_PRIVATE_NETWORKS` (default false): allow loopback and private receivers.
    public var allowPrivateNetworks = false
    /// `WEBHOOK_SENDER_ENABLED` (default true): run the sender in this replica. False keeps the
    /// endpoints' API and the outbox (events are still written, and sent by a replica that sends):
    /// for replicas that must not reach out, and for contract fuzzing, which registers arbitrary URLs.
    public var senderEnabled = true
    /// `WEBHOOK_TIMEOUT_SECONDS` (default 10): one attempt's limit, connect to last byte.
    public var timeout: Duration = .seconds(10)
    /// `WEBHOOK_RETRY_WINDOW_SECONDS` (default 86400, at least 24 h in production): a delivery is
    /// retried until an attempt fails this long after it was queued.
    public var retryWindow: Duration = .seconds(86_400)
    /// `WEBHOOK_RETRY_BASE_MILLISECONDS` (default 5000): the first retry's delay; each doubles.
    public var retryBase: Duration = .seconds(5)
    /// `WEBHOOK_RETRY_MAX_SECONDS` (default 3600): the longest delay between attempts.
    public var retryMax: Duration = .seconds(3600)
    /// `WEBHOOK_DISABLE_AFTER_SECONDS` (default 259200, 3 days): an endpoint failing without a
    /// single success this long is disabled until an admin re-enables it.
    public var disableAfter: Duration = .seconds(259_200)
    /// `WEBHOOK_POLL_SECONDS` (default 5): how often the sender looks for due work when no
    /// notification wakes it (retries falling due, a lost notification).
    public var pollInterval: Duration = .seconds(5)
    /// `WEBHOOK_CONCURRENCY` (default 8): attempts in flight per replica.
    public var concurrency = 8
    /// `WEBHOOK_CONCURRENCY_PER_ENDPOINT` (default 2): attempts in flight per replica to any one
    /// endpoint, so a receiver that hangs holds at most this many of the `concurrency` slots and
    /// the other endpoints' deliveries still go out at once (security issue 41, item 6). Above
    /// `concurrency` it is `concurrency`.
    public var concurrencyPerEndpoint = 2
    /// `WEBHOOK_ROTATION_GRACE_SECONDS` (default 86400): how long the old secret keeps signing.
    public var rotationGrace: Duration = .seconds(86_400)

    public init() {}

    /// The settings in `environment`; throws a message naming the bad variable.
    public static func parse(_ environment: [String: String]) throws -> WebhookSettings {
        var settings = WebhookSettings()
        settings.secretsKey = environment["WEBHOOK_SECRETS_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if let key = settings.secretsKey { _ = try WebhookSecretBox(encodedKey: key) }
        if let raw = environment["WEBHOOK_ALLOW_PRIVATE_NETWORKS"] {
            switch raw.lowercased() {
            case "true", "1", "yes": settings.allowPrivateNetworks = true
            case "false", "0", "no", "": settings.allowPrivateNetworks = false
            default: throw SettingError(name: "WEBHOOK_ALLOW_PRIVATE_NETWORKS", expected: "true or false")
            }
        }
        if let raw = environment["WEBHOOK_SENDER_ENABLED"] {
            switch raw.lowercased() {
            case "true", "1", "yes", "": settings.senderEnabled = true
            case "false", "0", "no": settings.senderEnabled = false
            default: throw SettingError(name: "WEBHOOK_SENDER_ENABLED", expected: "true or false")
            }
        }
        func seconds(_ name: String, _ range: ClosedRange<Int>) throws -> Duration? {
            guard let raw = environment[name] else { return nil }
            guard let value = Int(raw), range.contains(value) else {
                throw SettingError(name: name, expected: "whole seconds in \(range.lowerBound)...\(range.upperBound)")
            }
            return .seconds(value)
        }
        if let value = try seconds("WEBHOOK_TIMEOUT_SECONDS", 1...120) { settings.timeout = value }
        if let value = try seconds("WEBHOOK_RETRY_WINDOW_SECONDS", 0...2_592_000) { settings.retryWindow = value }
        if let value = try seconds("WEBHOOK_RETRY_MAX_SECONDS", 1...86_400) { settings.retryMax = value }
        if let value = try seconds("WEBHOOK_DISABLE_AFTER_SECONDS", 1...2_592_000) { settings.disableAfter = value }
        if let value = try seconds("WEBHOOK_POLL_SECONDS", 1...3600) { settings.pollInterval = value }
        if let value = try seconds("WEBHOOK_ROTATION_GRACE_SECONDS", 0...2_592_000) { settings.rotationGrace = value }
        if let raw = environment["WEBHOOK_RETRY_BASE_MILLISECONDS"] {
            guard let value = Int(raw), (1...600_000).contains(value) else {
                throw SettingError(name: "WEBHOOK_RETRY_BASE_MILLISECONDS", expected: "1...600000")
            }
            settings.retryBase = .milliseconds(value)
        }
        if let raw = environment["WEBHOOK_CONCURRENCY"] {
            guard let value = Int(raw), (1...256).contains(value) else { throw SettingError(name: "WEBHOOK_CONCURRENCY", expected: "1...256") }
            settings.concurrency = value
        }
        if let raw = environment["WEBHOOK_CONCURRENCY_PER_ENDPOINT"] {
            guard let value = Int(raw), (1...256).contains(value) else {
                throw SettingError(name: "WEBHOOK_CONCURRENCY_PER_ENDPOINT", expected: "1...256")
            }
            settings.concurrencyPerEndpoint = value
        }
        return settings
    }

    /// A setting with a value it cannot take.
    public struct SettingError: Error, CustomStringConvertible, Sendable {
        public var name: String
        public var expected: String
        public var description: String { "\(name) must be \(expected)" }
    }
}
