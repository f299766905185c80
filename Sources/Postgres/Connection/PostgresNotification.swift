/// A `NOTIFY` received on a channel this connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel name.
    public var channel: String
    /// The payload (empty when none was given).
    public var payload: String

    /// Creates a notification.
    public init(channel: String, payload: String) {
        self.channel = channel
        self.payload = payload
    }
}
