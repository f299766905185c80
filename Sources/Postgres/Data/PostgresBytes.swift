/// Raw bytes bound as `bytea` (binary, no escaping).
public struct PostgresBytes: PostgresBindable, Equatable {
    /// The bytes.
    public var bytes: [UInt8]
    /// Wraps bytes.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var postgresParameter: PostgresParameter { .binary(bytes, oid: PostgresType.bytea) }
}

extension PostgresBytes: PostgresDecodable {
    public static func decode(from bytes: UnsafeRawBufferPointer, type: UInt32) throws(PostgresError) -> PostgresBytes {
        PostgresBytes(try [UInt8].decode(from: bytes, type: type))
    }
}
