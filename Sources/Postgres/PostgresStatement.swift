/// One parameterised statement (`$1`, `$2`, ...) with its values, as sent in a pipeline.
public struct PostgresStatement: Sendable {
    /// The SQL text: a single statement.
    public var sql: String
    /// The values of `$1`, `$2`, ... in order.
    public var parameters: [any PostgresBindable]

    /// Creates a statement.
    public init(_ sql: String, _ parameters: [any PostgresBindable] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
