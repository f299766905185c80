import Postgres

extension PostgresClient {
    /// Runs `body` with a new client for `configuration` and shuts the client down whether `body` returned or threw.
    @discardableResult
    public static func withClient<T>(_ configuration: PostgresConfiguration, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: configuration)
        do {
            let value = try await body(client)
            await client.shutdown()
            return value
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
