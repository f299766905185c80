/// One parameterised statement (`$1`, `$2`, ...) with its values, as sent in a pipeline.
///
/// Usually made from a ``PostgresQuery``, whose interpolated values become the parameters.
public struct PostgresStatement: Sendable {
    /// The SQL text: a single statement.
    public var sql: String
    /// The values of `$1`, `$2`, ... in order.
    public var parameters: [any PostgresBindable]

    /// Creates a statement. Disfavoured so that an interpolated literal is a ``PostgresQuery``
    /// (values bound), never text with the values spliced in.
    @_disfavoredOverload
    public init(_ sql: String, _ parameters: [any PostgresBindable] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
